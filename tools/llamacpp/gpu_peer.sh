#!/usr/bin/env bash
# The whole llama.cpp peer run on a CUDA machine, in one command:
#   build (CUDA, sm_90) -> convert CKPT to GGUF F16 -> quantize Q8_0, Q4_K_M -> run_peer.py
#
# Usage: tools/llamacpp/gpu_peer.sh CKPT OUTDIR
#   CKPT    a hymt checkpoint dir (hymt make-test-model DIR --family HY-MT1.5-1.8B --real-shape)
#   OUTDIR  gets gguf/, logs/, peer.json (for `hymt bench --peer-results`) and peer.txt
# Env (all optional):
#   PEER_BUILD_MODE      cuda (default) or cpu
#   PEER_CONCURRENCY     default 1,32,256
#   PEER_REQUESTS        server requests per concurrency > 1 (default 1000)
#   PEER_REQUESTS_C1     server requests at concurrency 1 (default 20)
#   PEER_WARMUP          untimed server requests per GGUF (default 256)
#   PEER_QUANTS          default F16,Q8_0,Q4_K_M
#   PEER_TOOLS           default llama-batched-bench,llama-server
#   PEER_GPU_LAYERS      -ngl (default all)
#   PEER_SERVER_FLAGS    extra llama-server flags, e.g. "-kvu --samplers top_k --top-k 1"
#   JOBS                 build parallelism (default: all cores)
#   PEER_CMAKE_ARGS      extra CMake configure flags (see build.sh)
#   PYTHON               the interpreter (default python3)
# Every step skips work already done (built binaries, existing GGUF files), so a run cut
# short by a time limit continues where it stopped when started again.
set -euo pipefail

if [[ $# -ne 2 ]]; then
    echo "usage: $0 CKPT OUTDIR" >&2
    exit 2
fi
PYTHON="${PYTHON:-python3}"
ckpt="$1"
out="$2"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mkdir -p "${out}"
start=$(date +%s)

bin="$("${HERE}/build.sh" "${PEER_BUILD_MODE:-cuda}" | tail -n 1)"
echo "[gpu_peer] build ready after $(( $(date +%s) - start )) s: ${bin}"

"${PYTHON}" "${HERE}/convert.py" "${ckpt}" "${out}/gguf" --bin "${bin}" 2>&1 | grep -v "^INFO:hf-to-gguf:blk\." || \
    { echo "[gpu_peer] conversion failed" >&2; exit 1; }
for f in model-f16.gguf model-q8_0.gguf model-q4_k_m.gguf; do
    [[ -f "${out}/gguf/${f}" ]] || { echo "[gpu_peer] conversion did not write ${f}" >&2; exit 1; }
done
echo "[gpu_peer] GGUF files ready after $(( $(date +%s) - start )) s"

"${PYTHON}" "${HERE}/run_peer.py" --bin "${bin}" --models "${out}/gguf" --checkpoint "${ckpt}" --out "${out}" \
    --concurrency "${PEER_CONCURRENCY:-1,32,256}" \
    --requests "${PEER_REQUESTS:-1000}" --requests-c1 "${PEER_REQUESTS_C1:-20}" \
    --warmup "${PEER_WARMUP:-256}" --quants "${PEER_QUANTS:-F16,Q8_0,Q4_K_M}" \
    --tools "${PEER_TOOLS:-llama-batched-bench,llama-server}" --gpu-layers "${PEER_GPU_LAYERS:-all}" \
    --server-flags "${PEER_SERVER_FLAGS:-}"
echo "[gpu_peer] done after $(( $(date +%s) - start )) s; peer rows in ${out}/peer.json"
