#!/usr/bin/env bash
# The GPU measurements behind docs/BENCHMARKS.md, one stage per call of the device tool:
#   bash tools/gpu_session.sh quant18|quant7|budgets|closedloop|server|peer|offline|recipe
# Outputs (text + JSON) go to $OUT (default ./gpu-out; the device tool returns at most 8 files, so
# a stage writing more is run with OUT=/tmp/x and tarred into the tool's $OUT). Wheels carried in .whl/ are installed
# first when present (the GPU machine has no fastapi/uvicorn/pydantic).
set -u
OUT=${OUT:-./gpu-out}
mkdir -p "$OUT"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=$PYTHONPATH:/tmp/site
fi
bench() {  # bench NAME ARGS...: hymt bench with its report in $OUT/NAME.txt and JSON in $OUT/NAME.json
  local name=$1; shift
  timeout "${BENCH_TIMEOUT:-300}" python3 -m hymt bench "$@" --json "$OUT/$name.json" >"$OUT/$name.txt" 2>"$OUT/$name.err"
  echo "== $name rc=$?"; tail -n "${TAIL:-14}" "$OUT/$name.txt"; grep -E "Error|Traceback" -A2 "$OUT/$name.err" | tail -6
}
case "${1:-}" in
  quant18)
    timeout 300 python3 tools/gpu_check_quant.py >"$OUT/gpu_check_quant.txt" 2>&1; echo "== gpu_check_quant rc=$?"
    grep -E "PASS|FAIL|rel [0-9.e+-]*[1-9]e-0[0-2]" "$OUT/gpu_check_quant.txt" | tail -8
    bench quant18 --random-weights --family HY-MT1.5-1.8B --compare-quantization bf16,int8,int4,fp8 ;;
  quant7)
    BENCH_TIMEOUT=${BENCH_TIMEOUT:-560} bench quant7 --random-weights --family HY-MT1.5-7B --compare-quantization bf16,int8,int4,fp8 --num-requests 1000 ;;
  budgets)
    TAIL=12 bench int4_7b_8gb --random-weights --family HY-MT1.5-7B --quantization int4 --gpu-memory-gb 8
    TAIL=12 bench int4_18_3gb --random-weights --family HY-MT1.5-1.8B --quantization int4 --gpu-memory-gb 3
    TAIL=12 bench kvfp8_18 --random-weights --family HY-MT1.5-1.8B --kv-cache-dtype fp8 --gpu-memory-gb 8 ;;
  closedloop)  # the engine under a server's arrival pattern: 256 in flight, the next as each finishes
    bench closedloop18 --random-weights --family HY-MT1.5-1.8B --prompt-len-min 166 --prompt-len-max 208 \
      --num-requests 4000 --closed-loop 256 ;;
  server)
    DIR=${CKPT:-/tmp/hy18}  # CKPT: a real-shape 1.8B checkpoint written earlier (peer stage: /dev/shm/hy18)
    if [ ! -f "$DIR/config.json" ]; then
      start=$(date +%s); python3 -m hymt make-test-model "$DIR" --family HY-MT1.5-1.8B --real-shape >/dev/null 2>&1
      echo "== wrote the real-shape checkpoint in $(( $(date +%s) - start )) s"
    fi
    # Server texts of 24 words are one segment of 166-208 prompt tokens with this tokenizer
    # (the tiny BPE stretched to the real vocabulary): the offline run gets the same lengths.
    if [ -z "${SKIP_OFFLINE:-}" ]; then
      # The engine alone at the server's concurrencies too: a server of C clients can at best
      # match the engine with C requests in flight.
      # ENGINE_FLAGS (e.g. --max-num-batched-tokens 2048) go to this run and to the server alike.
      bench offline_ckpt18 --model "$DIR" --prompt-len-min 166 --prompt-len-max 208 --num-requests 4000 \
        --closed-loop 256,512 ${ENGINE_FLAGS:-}
      grep -h "loaded /tmp" "$OUT/offline_ckpt18.err" | tail -1  # weights from disk to the GPU (load_model)
    fi
    # WORKERS="1 2 4": `hymt serve --http-workers N` for each N (engine in its own process only).
    for mode in ${MODES:-process in_process}; do
      workers=1; [ $mode = process ] && workers=${WORKERS:-1}
      for w in $workers; do
      flag=""; [ $mode = in_process ] && flag=--engine-in-process
      tag=$mode; [ "$w" != 1 ] && tag=${mode}_w$w
      python3 -m hymt serve --model "$DIR" --port 8000 --max-queue 4096 --no-cache --log-level ${SERVE_LOG_LEVEL:-warning} $flag \
        --http-workers $w ${ENGINE_FLAGS:-} ${SERVE_FLAGS:-} >"$OUT/serve_$tag.log" 2>&1 &
      server=$!
      # Ready when every HTTP worker says so (/ready answers for one of them).
      python3 -c "from hymt.bench.server_ready import wait_for_ready_workers; wait_for_ready_workers('http://127.0.0.1:8000', $w)"
      for c in ${CONCURRENCY:-512 256}; do
        if [ -n "${PROFILE:-}" ] && [ -x /tmp/site/bin/py-spy ]; then  # stacks of the server and engine processes
          /tmp/site/bin/py-spy record --pid $server --subprocesses --format raw --rate 100 --duration 16 --nonblocking \
            -o "$OUT/pyspy_${tag}_c$c.txt" >"$OUT/pyspy.log" 2>&1 &
          python3 -c "
import re, time, httpx
for _ in range(60):
    text = httpx.get('http://127.0.0.1:8000/metrics').text
    print(round(time.time(), 1), *re.findall(r'^(?:hymt_queue_depth|hymt_num_requests_\w+|hymt_generation_tokens_total) \S+', text, re.M))
    time.sleep(0.5)" >"$OUT/metrics_${tag}_c$c.txt" 2>&1 &
        fi
        # With N workers the HTTP CPU per request is all N workers' (hymt_http_cpu_seconds_total).
        timeout 100 python3 -m hymt bench --server http://127.0.0.1:8000 --concurrency $c --num-requests 4000 \
          --words 24 --json "$OUT/server_${tag}_c$c.json" >"$OUT/server_${tag}_c$c.txt" 2>&1
        echo "== server ($tag) c=$c rc=$?"; tail -6 "$OUT/server_${tag}_c$c.txt"  # ends with the CPU per request
      done
      kill $server; wait $server 2>/dev/null; grep -iE "error|traceback" "$OUT/serve_$tag.log" | tail -3
      done
      CONCURRENCY=512
    done ;;
  peer)  # llama.cpp beside hymt on one checkpoint (docs/PEER.md). The CUDA build takes ~330 s on
    # 16 cores: run `tools/llamacpp/build.sh cuda` in a call of its own first. Files go to
    # /dev/shm: on disk the 6.7 GB of GGUF files starve everything else of I/O.
    DIR=/dev/shm/hy18; P=/dev/shm/peer
    tools/llamacpp/build.sh cuda | tail -n 1
    [ -f "$DIR/config.json" ] || python3 -m hymt make-test-model "$DIR" --family HY-MT1.5-1.8B --real-shape >/dev/null 2>&1
    timeout "${PEER_TIMEOUT:-420}" tools/llamacpp/gpu_peer.sh "$DIR" "$P" >"$OUT/peer.log" 2>&1
    echo "== peer rc=$?"; cat "$P/peer.txt" 2>/dev/null; cp "$P/peer.json" "$OUT/" 2>/dev/null
    for q in bf16 int8 int4; do
      quant=(); [ $q != bf16 ] && quant=(--quantization $q)
      TAIL=30 bench "peer_hymt_$q" --model "$DIR" --num-requests 1000 --closed-loop 32,256 "${quant[@]}" \
        --peer-results "$P/peer.json"
    done ;;
  offline)  # the offline target's workload (2,000 requests): where its wall time goes, and the
    # levers that change precision (fp8 KV cache, fp8 weights) beside the engine as it is
    bench offline18 --random-weights --family HY-MT1.5-1.8B
    # Host time per phase (wait: the host idle on the GPU), then GPU time per phase (synced).
    HYMT_PROFILE=cpu TAIL=18 bench offline18_cpu --random-weights --family HY-MT1.5-1.8B
    HYMT_PROFILE=sync TAIL=18 bench offline18_sync --random-weights --family HY-MT1.5-1.8B
    bench offline18_kvfp8 --random-weights --family HY-MT1.5-1.8B --kv-cache-dtype fp8
    bench offline18_fp8 --random-weights --family HY-MT1.5-1.8B --quantization fp8
    bench offline7_fp8 --random-weights --family HY-MT1.5-7B --quantization fp8 --num-requests 1000 ;;
  recipe)  # the fastest offline recipe (fp8 weights and KV cache, 1,024 rows) and its neighbours
    bf16=(--random-weights --family HY-MT1.5-1.8B --batch1-requests 4)
    fp8=("${bf16[@]}" --quantization fp8 --kv-cache-dtype fp8)
    bench recipe_base "${bf16[@]}"
    bench recipe "${fp8[@]}" --max-num-seqs 1024
    bench recipe_t32k "${fp8[@]}" --max-num-seqs 1024 --max-num-batched-tokens 32768
    bench recipe_s768 "${fp8[@]}" --max-num-seqs 768
    bench recipe_s1536 "${fp8[@]}" --max-num-seqs 1536 ;;
  *) echo "usage: $0 quant18|quant7|budgets|closedloop|server|peer|offline|recipe" >&2; exit 2 ;;
esac
