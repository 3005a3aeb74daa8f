#!/usr/bin/env bash
# Build llama-server, llama-batched-bench and llama-quantize from the trimmed
# archive in .peer/ (written by fetch_source.sh).
#
# Usage: tools/llamacpp/build.sh cuda|cpu
#   cuda  CUDA backend for sm_90 (H100), llama.cpp's default flash-attention kernels
#   cpu   CPU backend only (for checking the recipe on a machine without a GPU)
# Env:   JOBS (default: all cores), PEER_DIR (default: <repo>/.peer),
#        PEER_CMAKE_ARGS extra configure flags, e.g. -DCUDAToolkit_ROOT=/usr/local/cuda when
#        CMake does not find the toolkit (cuBLAS headers and libraries) next to nvcc
# Prints the binary folder on its last line.  Idempotent: when the three
# binaries exist it builds nothing; an interrupted build resumes where it stopped.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=tools/llamacpp/pin.sh
source "${HERE}/pin.sh"

mode="${1:-}"
case "${mode}" in
    # One GPU: no NCCL. Flash-attention kernels, CUDA graphs and the rest stay at
    # llama.cpp's defaults (GGML_CUDA_FA=ON, GGML_CUDA_GRAPHS=ON).
    cuda) backend_flags=(-DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DGGML_CUDA_NCCL=OFF) ;;
    cpu) backend_flags=(-DGGML_CUDA=OFF) ;;
    *) echo "usage: $0 cuda|cpu" >&2; exit 2 ;;
esac

ROOT="$(cd "${HERE}/../.." && pwd)"
PEER_DIR="${PEER_DIR:-${ROOT}/.peer}"
ARCHIVE="${PEER_DIR}/${LLAMACPP_ARCHIVE_NAME}"
SRC="${PEER_DIR}/llama.cpp"
BUILD="${PEER_DIR}/build-${mode}"
BIN="${BUILD}/bin"
JOBS="${JOBS:-$(nproc)}"
TARGETS=(llama-server llama-batched-bench llama-quantize)

if [[ -x "${BIN}/llama-server" && -x "${BIN}/llama-batched-bench" && -x "${BIN}/llama-quantize" ]]; then
    echo "llama.cpp (${mode}) already built in ${BIN}" >&2
    echo "${BIN}"
    exit 0
fi

start=$(date +%s)
if [[ ! -f "${SRC}/PEER_SOURCE.txt" ]]; then
    [[ -f "${ARCHIVE}" ]] || { echo "missing ${ARCHIVE}: run tools/llamacpp/fetch_source.sh" >&2; exit 1; }
    tar -xJf "${ARCHIVE}" -C "${PEER_DIR}"
fi

if [[ "${mode}" == cuda ]]; then
    command -v nvcc >/dev/null || { echo "nvcc is not on PATH" >&2; exit 1; }
    echo "nvcc: $(command -v nvcc), $(nvcc --version | tail -n 1)" >&2
fi
if [[ ! -f "${BUILD}/build.ninja" ]]; then
    # No tests, examples, app, web UI, HTTPS or prebuilt-UI download: nothing
    # the benchmark uses, and the GPU machine has no network.
    cmake -S "${SRC}" -B "${BUILD}" -G Ninja \
        -DCMAKE_BUILD_TYPE=Release \
        -DBUILD_SHARED_LIBS=OFF \
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF \
        -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON \
        -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
        -DLLAMA_OPENSSL=OFF \
        -DLLAMA_BUILD_NUMBER=0 -DLLAMA_BUILD_COMMIT="${LLAMACPP_COMMIT:0:10}" \
        "${backend_flags[@]}" ${PEER_CMAKE_ARGS:-}
fi
cmake --build "${BUILD}" --parallel "${JOBS}" --target "${TARGETS[@]}"

echo "llama.cpp (${mode}) built in $(( $(date +%s) - start )) s" >&2
echo "${BIN}"
