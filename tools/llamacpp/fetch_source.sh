#!/usr/bin/env bash
# Fetch the pinned llama.cpp source and write a trimmed archive to .peer/.
#
# llama.cpp is taken from the PyPI sdist of llama-cpp-python, which vendors a
# fixed llama.cpp commit; PyPI is reachable where a git clone is not.  The
# archive keeps only what the CPU and CUDA builds of llama-server,
# llama-batched-bench and llama-quantize plus the GGUF converter need, so it
# can travel inside the repository checkout (the .peer/ folder is git-ignored).
#
# Usage: tools/llamacpp/fetch_source.sh [SDIST]
#   SDIST  an already downloaded llama_cpp_python-<version>.tar.gz (else pip downloads it)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=tools/llamacpp/pin.sh
source "${HERE}/pin.sh"

ROOT="$(cd "${HERE}/../.." && pwd)"
PEER_DIR="${ROOT}/.peer"
ARCHIVE="${PEER_DIR}/${LLAMACPP_ARCHIVE_NAME}"
mkdir -p "${PEER_DIR}"

work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT

sdist="${1:-}"
if [[ -z "${sdist}" ]]; then
    "${PYTHON:-python3}" -m pip download --no-deps --no-binary=:all: --dest "${work}" \
        "llama-cpp-python==${LLAMA_CPP_PYTHON_VERSION}"
    sdist="${work}/llama_cpp_python-${LLAMA_CPP_PYTHON_VERSION}.tar.gz"
fi
echo "${LLAMA_CPP_PYTHON_SDIST_SHA256}  ${sdist}" | sha256sum --check --strict

src_prefix="llama_cpp_python-${LLAMA_CPP_PYTHON_VERSION}/vendor/llama.cpp"
tar -xzf "${sdist}" -C "${work}" "${src_prefix}"
src="${work}/${src_prefix}"

# Everything below is unused by the three targets and the converter.  CMake
# still configures every tools/ subfolder, so their sources stay; only the
# web UI (sources of an npm build that is switched off), the model vocabularies,
# the docs, tests, examples and the backends other than CPU and CUDA go.
trim=(
    models docs media tests examples pocs benches skills ci app .devops .github
    tools/ui/src tools/ui/tests tools/ui/static tools/ui/package-lock.json
    tools/server/tests tools/server/bench tools/server/public tools/server/themes
    ggml/src/ggml-cann ggml/src/ggml-et ggml/src/ggml-hexagon ggml/src/ggml-metal
    ggml/src/ggml-musa ggml/src/ggml-opencl ggml/src/ggml-openvino ggml/src/ggml-sycl
    ggml/src/ggml-virtgpu ggml/src/ggml-vulkan ggml/src/ggml-webgpu ggml/src/ggml-zdnn
    ggml/src/ggml-zendnn ggml/src/ggml-hip ggml/src/ggml-blas ggml/src/ggml-rpc
)
for path in "${trim[@]}"; do
    rm -rf "${src:?}/${path}"
done
# The root CMakeLists adds tests/ and examples/ only when asked; keep a marker
# so a reader of the archive knows the trim was deliberate.
printf '%s\n' "llama-cpp-python ${LLAMA_CPP_PYTHON_VERSION}" \
    "llama.cpp commit ${LLAMACPP_COMMIT}" "trimmed by tools/llamacpp/fetch_source.sh" \
    > "${src}/PEER_SOURCE.txt"

tar -C "$(dirname "${src}")" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 \
    -cf - llama.cpp | xz -9e -T1 > "${ARCHIVE}.tmp"
mv "${ARCHIVE}.tmp" "${ARCHIVE}"
du -h "${ARCHIVE}"
