#!/usr/bin/env python3
"""Measure llama.cpp on hymt's benchmark workload; write peer rows for `hymt bench --peer-results`.

    python tools/llamacpp/run_peer.py --bin .peer/build-cuda/bin --models OUT/gguf \\
        --checkpoint CKPT --out OUT

For each GGUF (model-f16.gguf, model-q8_0.gguf, model-q4_k_m.gguf in --models):

* llama-batched-bench with the mean prompt length, the forced answer length and
  B = each concurrency (-npp 60 -ntg 32 -npl 1,32,256), all layers on the GPU, flash attention;
* llama-server (as many slots as the highest concurrency, continuous batching, all layers on
  the GPU, flash attention) driven at each concurrency by clients that keep that many
  requests in flight, each posting the next prompt as its answer arrives. Prompts are
  token-id lists drawn exactly as `hymt bench` draws them (hymt.bench.workload, same seed and
  lengths); every answer is forced to --output-len tokens (n_predict + ignore_eos).

Writes OUT/peer.json (hymt.bench.peer.PeerResults) and OUT/peer.txt (the table), and keeps
each tool's log in OUT/logs/.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import platform
import re
import shlex
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from hymt.bench.peer import PeerResults, PeerRow, parse_batched_bench_jsonl  # noqa: E402
from hymt.bench.results import percentile  # noqa: E402
from hymt.bench.workload import random_prompts  # noqa: E402

#: GGUF file stem -> GGUF type, in the order they run (convert.py writes these files).
GGUF_FILES = {"model-f16.gguf": "F16", "model-q8_0.gguf": "Q8_0", "model-q4_k_m.gguf": "Q4_K_M"}
#: KV cells per server slot: the longest prompt plus the answer, rounded up.
SLOT_CONTEXT = 256
BATCHED_BENCH_TRIES = 4


@dataclass(frozen=True)
class PeerPlan:
    """What one run measures (the command-line options, validated by argparse)."""

    binaries: Path
    models: Path
    out: Path
    vocab_size: int
    concurrency: tuple[int, ...]
    requests: int
    requests_c1: int
    warmup: int
    prompt_len_min: int
    prompt_len_max: int
    output_len: int
    seed: int
    gpu_layers: str
    threads: int | None
    tools: tuple[str, ...]
    quants: tuple[str, ...]
    server_flags: tuple[str, ...] = ()

    def requests_at(self, concurrency: int) -> int:
        return self.requests_c1 if concurrency == 1 else self.requests

    def common_flags(self) -> list[str]:
        flags = ["-ngl", self.gpu_layers, "-fa", "on", "-b", "2048", "-ub", "512"]
        return flags + (["-t", str(self.threads)] if self.threads else [])


def pinned_version() -> str:
    """"llama-cpp-python X (llama.cpp <commit>)" from pin.sh, the one place the pin is written."""
    pins = dict(re.findall(r'^(\w+)="([^"$]*)"', (Path(__file__).parent / "pin.sh").read_text(), re.M))
    return f"llama-cpp-python {pins['LLAMA_CPP_PYTHON_VERSION']} (llama.cpp {pins['LLAMACPP_COMMIT'][:10]})"


def device_name() -> str:
    try:
        names = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], check=True,
                               capture_output=True, text=True, timeout=30).stdout.split("\n")
        return names[0].strip() + (f" (x{len(names) - 1})" if len(names) > 2 else "")
    except (OSError, subprocess.SubprocessError):
        return f"CPU ({platform.processor() or platform.machine()})"


def run_batched_bench(plan: PeerPlan, gguf: Path, quant: str, log: Path) -> tuple[PeerRow, ...]:
    """One row per concurrency. llama.cpp's logger writes from a thread that the tool does not
    flush before it exits, so its last lines are now and then lost; the batch sizes whose row
    went missing run again (a fresh process each time), up to BATCHED_BENCH_TRIES runs."""
    mean_prompt = (plan.prompt_len_min + plan.prompt_len_max) // 2
    context = max(plan.concurrency) * SLOT_CONTEXT
    rows: dict[int, PeerRow] = {}
    log.write_text("")
    for _ in range(BATCHED_BENCH_TRIES):
        missing = [c for c in plan.concurrency if c not in rows]
        if not missing:
            break
        cmd = [str(plan.binaries / "llama-batched-bench"), "-m", str(gguf), "-c", str(context),
               "-npp", str(mean_prompt), "-ntg", str(plan.output_len), "-npl", ",".join(map(str, missing)),
               *plan.common_flags(), "--output-format", "jsonl"]
        print("+", shlex.join(cmd), flush=True)
        done = subprocess.run(cmd, capture_output=True, text=True)
        with log.open("a") as sink:
            sink.write(f"$ {shlex.join(cmd)}\n{done.stderr}{done.stdout}")
        if done.returncode:
            raise SystemExit(f"llama-batched-bench failed ({done.returncode}); see {log}")
        if "{" in done.stdout:
            rows.update((r.concurrency, r) for r in parse_batched_bench_jsonl(done.stdout, quant, shlex.join(cmd)))
    missing = [c for c in plan.concurrency if c not in rows]
    if missing:
        raise SystemExit(f"llama-batched-bench printed no row for B={missing} in {BATCHED_BENCH_TRIES} runs; see {log}")
    return tuple(rows[c] for c in plan.concurrency)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def llama_server(plan: PeerPlan, gguf: Path, log: Path):
    """A llama-server on a free local port; yields (base URL, command)."""
    slots = max(plan.concurrency)
    port = free_port()
    cmd = [str(plan.binaries / "llama-server"), "-m", str(gguf), "--host", "127.0.0.1", "--port", str(port),
           "-np", str(slots), "-c", str(slots * SLOT_CONTEXT), "--cont-batching", *plan.common_flags(),
           "--no-webui", "--cache-ram", "0", *plan.server_flags]
    print("+", shlex.join(cmd), flush=True)
    with log.open("w") as sink:
        server = subprocess.Popen(cmd, stdout=sink, stderr=subprocess.STDOUT)
        try:
            url = f"http://127.0.0.1:{port}"
            wait_healthy(url, server, log)
            yield url, shlex.join(cmd)
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()


def wait_healthy(url: str, server: subprocess.Popen, log: Path, timeout_s: float = 300.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"llama-server exited ({server.returncode}); see {log}")
        try:
            if httpx.get(f"{url}/health", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"llama-server not healthy after {timeout_s:.0f} s; see {log}")


async def drive(url: str, prompts: list[list[int]], concurrency: int, output_len: int) -> tuple[float, list[float]]:
    """Post every prompt with `concurrency` in flight; (wall seconds, per-request latencies)."""
    queue = iter(prompts)
    latencies: list[float] = []
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)

    async def client(http: httpx.AsyncClient) -> None:
        for prompt in queue:
            body = {"prompt": prompt, "n_predict": output_len, "ignore_eos": True, "cache_prompt": False,
                    "temperature": 0.0, "stream": False}
            sent = time.perf_counter()
            reply = await http.post(f"{url}/completion", json=body)
            reply.raise_for_status()
            predicted = reply.json()["timings"]["predicted_n"]
            if predicted != output_len:
                raise SystemExit(f"llama-server generated {predicted} tokens, not {output_len}")
            latencies.append(time.perf_counter() - sent)

    async with httpx.AsyncClient(limits=limits, timeout=600.0) as http:
        start = time.perf_counter()
        await asyncio.gather(*(client(http) for _ in range(concurrency)))
        return time.perf_counter() - start, latencies


def run_server(plan: PeerPlan, gguf: Path, quant: str, log: Path) -> list[PeerRow]:
    rows = []
    with llama_server(plan, gguf, log) as (url, command):
        warmup = random_prompts(plan.warmup, plan.prompt_len_min, plan.prompt_len_max, plan.vocab_size, plan.seed + 2)
        asyncio.run(drive(url, warmup, max(plan.concurrency), plan.output_len))
        higher = [c for c in plan.concurrency if c != 1]
        for concurrency in plan.concurrency:
            # The prompt sets of hymt's runs: batch 1 draws from its latency run's seed, each
            # higher concurrency from that of `--closed-loop` listing the same values.
            seed = plan.seed + 1 if concurrency == 1 else plan.seed + 3 + higher.index(concurrency)
            prompts = random_prompts(plan.requests_at(concurrency), plan.prompt_len_min, plan.prompt_len_max,
                                     plan.vocab_size, seed)
            wall, latencies = asyncio.run(drive(url, prompts, concurrency, plan.output_len))
            ms = [s * 1e3 for s in latencies]
            rows.append(PeerRow(
                tool="llama-server", quant=quant, concurrency=concurrency, num_requests=len(prompts), wall_s=wall,
                requests_per_s=len(prompts) / wall, output_tokens_per_s=len(prompts) * plan.output_len / wall,
                latency_ms_p50=percentile(ms, 50), latency_ms_p90=percentile(ms, 90), ttft_ms_p50=None,
                command=command,
            ))
            print(f"  llama-server {quant} c={concurrency}: {rows[-1].requests_per_s:.2f} req/s, "
                  f"p50 {rows[-1].latency_ms_p50:.1f} ms", flush=True)
    return rows


def format_rows(results: PeerResults) -> str:
    lines = [f"llama.cpp peer: {results.llamacpp_version} on {results.device}", results.workload, "",
             f"{'tool':<20} {'quant':<7} {'c':>4} {'requests':>8} {'wall s':>8} {'req/s':>9} {'out tok/s':>10} "
             f"{'p50 ms':>8} {'p90 ms':>8} {'ttft ms':>8}"]
    for r in results.rows:
        ttft = "-" if r.ttft_ms_p50 is None else f"{r.ttft_ms_p50:.1f}"
        lines.append(f"{r.tool:<20} {r.quant:<7} {r.concurrency:>4} {r.num_requests:>8} {r.wall_s:>8.2f} "
                     f"{r.requests_per_s:>9.2f} {r.output_tokens_per_s:>10.0f} {r.latency_ms_p50:>8.1f} "
                     f"{r.latency_ms_p90:>8.1f} {ttft:>8}")
    return "\n".join(lines) + "\n"


def parse_plan(argv: list[str] | None = None) -> PeerPlan:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bin", type=Path, required=True, help="folder of the built llama.cpp binaries")
    p.add_argument("--models", type=Path, required=True, help="folder of the GGUF files (convert.py)")
    p.add_argument("--out", type=Path, required=True)
    vocab = p.add_mutually_exclusive_group(required=True)
    vocab.add_argument("--checkpoint", type=Path, help="the hymt checkpoint (its config.json gives the vocab size)")
    vocab.add_argument("--vocab-size", type=int)
    p.add_argument("--concurrency", default="1,32,256", help="comma list (default 1,32,256)")
    p.add_argument("--requests", type=int, default=1000, help="server requests per concurrency > 1")
    p.add_argument("--requests-c1", type=int, default=20, help="server requests at concurrency 1")
    p.add_argument("--warmup", type=int, default=256, help="untimed server requests first, per GGUF")
    p.add_argument("--prompt-len-min", type=int, default=40)
    p.add_argument("--prompt-len-max", type=int, default=80)
    p.add_argument("--output-len", type=int, default=32)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--gpu-layers", default="all", help="-ngl (default all; 0 on a CPU build)")
    p.add_argument("--threads", type=int, help="CPU threads of the llama.cpp tools (default: theirs)")
    p.add_argument("--tools", default="llama-batched-bench,llama-server")
    p.add_argument("--quants", default=",".join(GGUF_FILES.values()))
    p.add_argument("--server-flags", default="", help='extra llama-server flags, one string (e.g. "-kvu")')
    a = p.parse_args(argv)
    vocab_size = a.vocab_size or json.loads((a.checkpoint / "config.json").read_text())["vocab_size"]
    concurrency = tuple(int(n) for n in a.concurrency.split(","))
    if min(concurrency) < 1 or min(a.requests, a.requests_c1) < 1 or a.prompt_len_max < a.prompt_len_min:
        p.error("concurrency and request counts must be >= 1, and --prompt-len-max >= --prompt-len-min")
    if a.prompt_len_max + a.output_len > SLOT_CONTEXT:
        p.error(f"prompt plus answer must fit a server slot of {SLOT_CONTEXT} tokens")
    return PeerPlan(a.bin, a.models, a.out, vocab_size, concurrency, a.requests, a.requests_c1, a.warmup,
                    a.prompt_len_min, a.prompt_len_max, a.output_len, a.seed, a.gpu_layers, a.threads,
                    tuple(a.tools.split(",")), tuple(a.quants.split(",")), tuple(shlex.split(a.server_flags)))


def main() -> None:
    plan = parse_plan()
    (plan.out / "logs").mkdir(parents=True, exist_ok=True)
    rows: list[PeerRow] = []
    for name, quant in GGUF_FILES.items():
        gguf = plan.models / name
        if quant not in plan.quants:
            continue
        if not gguf.is_file():
            raise SystemExit(f"missing {gguf}: run tools/llamacpp/convert.py first")
        if "llama-batched-bench" in plan.tools:
            rows += run_batched_bench(plan, gguf, quant, plan.out / "logs" / f"batched-bench-{quant}.log")
        if "llama-server" in plan.tools:
            rows += run_server(plan, gguf, quant, plan.out / "logs" / f"server-{quant}.log")
    workload = (f"prompts {plan.prompt_len_min}-{plan.prompt_len_max} tokens (batched-bench: their mean "
                f"{(plan.prompt_len_min + plan.prompt_len_max) // 2}), {plan.output_len} answer tokens forced; "
                f"server requests: {plan.requests_c1} at c=1, {plan.requests} at each higher c, after "
                f"{plan.warmup} untimed")
    results = PeerResults(pinned_version(), device_name(), workload, tuple(rows))
    results.write_json(plan.out / "peer.json")
    table = format_rows(results)
    (plan.out / "peer.txt").write_text(table)
    print(table + f"wrote {plan.out / 'peer.json'}")


if __name__ == "__main__":
    main()
