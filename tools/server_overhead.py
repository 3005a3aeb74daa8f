"""How much of an engine's throughput the server layer keeps, measured on CPU.

A GPU engine's step releases the GIL while the device works; the tiny CPU model does not
(its attention runs in Python-driven torch ops), so a CPU `hymt bench --server` run cannot
show what the HTTP layer, the pipeline and the AsyncEngine hand-off cost next to a fast
engine. This tool puts a `SimulatedEngine` (every step sleeps, GIL released, like a CUDA
sync, then gives each running sequence one token) behind the real Translator and server and
drives it with the real `hymt bench --server` client in a second process:

    python tools/server_overhead.py --checkpoint /tmp/tiny [--step-ms 4] [--concurrency 64]
    python tools/server_overhead.py --checkpoint /tmp/tiny --http-workers 2   # `hymt serve --http-workers 2`

It prints the engine's own rate (requests/s with everything submitted at once) beside the
server's rate at the given concurrency, in engine requests (segments) per second, and the
CPU per request of the HTTP process(es) and of the engine process as `hymt bench --server`
reads them from /metrics. With --http-workers N the server runs as `hymt serve` runs it then
(hymt/server/http_workers.py: N worker processes, one engine process).
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from pathlib import Path

from hymt.engine.interface import Engine, EngineStats
from hymt.engine.outputs import RequestOutput


class SimulatedEngine(Engine):
    """`max_batch` sequences per step; each step costs step_s + per_seq_s * batch of GIL-free sleep."""

    def __init__(self, step_s: float, per_seq_s: float, max_batch: int, cpu_s: float = 0.0, stop_token_ids=(0,)):
        self.step_s, self.per_seq_s, self.max_batch, self.cpu_s = step_s, per_seq_s, max_batch, cpu_s
        self.stop_token_ids = tuple(stop_token_ids)
        self._waiting: deque[str] = deque()
        self._running: list[str] = []
        self._reqs: dict[str, tuple[list[int], object, list[int]]] = {}
        self._count = 0

    def add_request(self, prompt_token_ids, params, request_id=None, *, final_only=False):
        request_id = request_id or f"sim-{self._count}"
        self._count += 1
        self._reqs[request_id] = (list(prompt_token_ids), params, [])
        self._waiting.append(request_id)
        return request_id

    def step(self):
        while self._waiting and len(self._running) < self.max_batch:
            rid = self._waiting.popleft()
            if rid in self._reqs:
                self._running.append(rid)
        _hold_gil(self.cpu_s)  # the Python side of a real step: scheduling, inputs, launches
        time.sleep(self.step_s + self.per_seq_s * len(self._running))
        outs, still = [], []
        for rid in self._running:
            if rid not in self._reqs:  # aborted
                continue
            prompt, params, toks = self._reqs[rid]
            toks.append(prompt[len(toks) % len(prompt)])  # echo the prompt: valid ids, decodable text
            done = len(toks) >= params.max_tokens
            outs.append(RequestOutput(rid, prompt, list(toks), [toks[-1]], done, "length" if done else None))
            if done:
                del self._reqs[rid]
            else:
                still.append(rid)
        self._running = still
        return outs

    def abort(self, request_id):
        self._reqs.pop(request_id, None)

    def has_unfinished(self):
        return bool(self._reqs)

    def stats(self):
        return EngineStats(num_running=len(self._running), num_waiting=len(self._waiting))


def _hold_gil(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def engine_rate(engine: SimulatedEngine, prompts: int, output_len: int) -> float:
    from hymt.engine.sampling import SamplingParams

    params = SamplingParams(max_tokens=output_len, ignore_eos=True, temperature=0)
    start = time.perf_counter()
    engine.generate([[5, 6, 7]] * prompts, params)
    return prompts / (time.perf_counter() - start)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkpoint", required=True, help="a tiny checkpoint (hymt make-test-model DIR)")
    ap.add_argument("--step-ms", type=float, default=4.0)
    ap.add_argument("--per-seq-us", type=float, default=5.0)
    ap.add_argument("--max-batch", type=int, default=256)
    ap.add_argument("--engine-cpu-ms", type=float, default=1.0, help="Python work (GIL held) per step")
    ap.add_argument("--in-process", action="store_true", help="engine in the server process (as before)")
    ap.add_argument("--http-workers", type=int, default=1, help="HTTP processes in front of the engine process")
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--num-requests", type=int, default=2000)
    ap.add_argument("--words", type=int, default=12, help="words per request text (keep it one segment)")
    ap.add_argument("--port", type=int, default=8731)
    ap.add_argument("--client-processes", type=int, default=0)
    args = ap.parse_args()
    if args.http_workers > 1 and args.in_process:
        ap.error("--http-workers above 1 shares one engine process: not with --in-process")

    from hymt.server.settings import ServerSettings

    build = functools.partial(SimulatedEngine, args.step_ms / 1e3, args.per_seq_us / 1e6, args.max_batch,
                              args.engine_cpu_ms / 1e3)
    offline = engine_rate(build(), args.num_requests, 32)
    settings = ServerSettings(model=args.checkpoint, port=args.port, max_queue=8192, cache=False,
                              log_level="warning")
    cpu_before = time.process_time()  # this process: the server, its engine thread, its workers
    client_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    if args.http_workers > 1:
        result = _run_workers(args, settings, build)
    else:
        result = _run_single(args, settings, build)
    cpu_s = time.process_time() - cpu_before
    client = resource.getrusage(resource.RUSAGE_CHILDREN)
    client_s = client.ru_utime + client.ru_stime - client_before.ru_utime - client_before.ru_stime
    segments_per_s = result["segments"] / result["wall_s"]
    where = "in the server process" if args.in_process else "in its own process"
    print(f"engine alone: {offline:.1f} req/s (step {args.engine_cpu_ms} ms Python + {args.step_ms} ms device + "
          f"{args.per_seq_us} us/seq, batch {args.max_batch}); engine {where}; {args.http_workers} HTTP process(es)")
    print(f"server: {segments_per_s:.1f} engine requests/s, {result['requests_per_s']:.1f} req/s at "
          f"concurrency {args.concurrency}; {result['segments'] / max(result['completed'], 1):.2f} segments/request; "
          f"p50 {result['latency_ms_p50']:.0f} ms; {result['errors']} errors")
    done = max(result["completed"], 1)
    if args.http_workers == 1:
        print(f"CPU per request: server process {cpu_s / done * 1e3:.2f} ms, load generator "
              f"{client_s / done * 1e3:.2f} ms (engine children included where the engine runs in its own process)")
    for name, key in (("HTTP processes", "server_cpu_s"), ("engine process", "engine_cpu_s")):
        if result.get(key) is not None:
            print(f"CPU per request from /metrics: {name} {result[key] / done * 1e3:.2f} ms")
    print(f"server keeps {segments_per_s / offline:.0%} of the engine's rate")


def _bench(args: argparse.Namespace) -> dict:
    """`hymt bench --server` against the server on args.port; its JSON result."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "server.json"
        subprocess.run(
            [sys.executable, "-m", "hymt", "bench", "--server", f"http://127.0.0.1:{args.port}",
             "--concurrency", str(args.concurrency), "--num-requests", str(args.num_requests),
             "--words", str(args.words), "--client-processes", str(args.client_processes), "--json", str(report)],
            check=True, stdout=subprocess.DEVNULL,
        )
        return json.loads(report.read_text())


def _run_single(args: argparse.Namespace, settings, build) -> dict:
    """The server in this process (a uvicorn thread), the engine in a child unless --in-process."""
    import uvicorn

    from hymt.engine.engine_process import EngineProcess, EngineSpec
    from hymt.server.app import create_app
    from hymt.translate import Translator

    def factory(s):
        engine = build() if args.in_process else EngineProcess(EngineSpec(builder=build))
        return Translator(s.model, engine=engine, cache=False)

    app = create_app(settings, translator_factory=factory)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=args.port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    try:
        return _bench(args)
    finally:
        server.should_exit = True


def _run_workers(args: argparse.Namespace, settings, build) -> dict:
    """The server as `hymt serve --http-workers N` runs it (this process is the parent); the
    benchmark runs from a thread once every worker is ready, then SIGTERM drains the server."""
    from hymt.bench.server_ready import wait_for_ready_workers
    from hymt.engine.engine_process import EngineProcess, EngineSpec
    from hymt.server.http_workers import serve_workers
    from hymt.translate import Translator

    def owner(s, address):
        return Translator(s.model, engine=EngineProcess(EngineSpec(builder=build), listen=address), cache=False)

    result: dict = {}

    def drive() -> None:
        try:
            wait_for_ready_workers(f"http://127.0.0.1:{args.port}", args.http_workers)
            result.update(_bench(args))
        finally:
            os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=drive, daemon=True).start()
    serve_workers(settings, args.http_workers, factory=owner)
    if not result:
        raise SystemExit("the benchmark did not finish")
    return result


if __name__ == "__main__":
    main()
