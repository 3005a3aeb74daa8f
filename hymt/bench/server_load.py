"""`hymt bench --server URL`: concurrent clients against a running hymt server's native API.

Each of `concurrency` clients posts `POST {url}/api/translate` one request after another
until `num_requests` have been sent or the time limit passes. The translation cache is
turned off and the quality retry too (`"retry": false`), so every request reaches the
engine exactly once, as in the offline benchmark; the `sampling` field forces the answer
length (random-weight servers never stop on their own, and their noise would fail the
quality guard).

Texts are unique within a run and across runs: each carries the run's tag, fresh for every
run. A server keeps the KV blocks of earlier prompts in its prefix cache, so a run that sent
the texts of the run before it on the same server would skip most of their prefill. What
the prompts do share is the prompt template ahead of the text, as real traffic does; the
result says how many prompt tokens the engine computed.
"""
from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import secrets
import ssl
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import httpx
import numpy as np

from hymt.bench.results import EnvInfo, ServerLoadResult, percentile
from hymt.bench.server_counters import ServerCounters, read_server_counters
from hymt.bench.server_ready import wait_for_ready_workers
from hymt.errors import InvalidInputError

_WORDS = (
    "the", "river", "market", "opens", "early", "every", "morning", "while", "small", "boats", "carry", "fresh",
    "fruit", "from", "villages", "upstream", "and", "traders", "argue", "about", "prices", "under", "bright",
    "umbrellas", "before", "noon", "heat", "drives", "everyone", "into", "shade", "of", "old", "trees",
)


@dataclass(frozen=True)
class ServerLoadOptions:
    """Options of a server load run.

    Attributes:
        url: server root, e.g. "http://127.0.0.1:8000".
        concurrency: clients with one request in flight each.
        num_requests: requests to send in all.
        api_key: sent as `Authorization: Bearer`.
        src / tgt: language codes of every request.
        output_len: answer tokens forced through the `sampling` field.
        words: words per request text (about 1.3 tokens each).
        time_limit_s: no new request starts after this many seconds.
        timeout_s: per-request HTTP timeout.
        processes: load-generator processes sharing the clients; 0 picks one per 64 clients,
            at most half the CPU cores (and at least one).
        wait_workers: before the run, wait until this many HTTP workers of the server have
            their model ready (server_ready.py); 0 starts at once.
        run_tag: put in every text of the run; empty (the default) draws a fresh one.
    """

    url: str
    concurrency: int = 16
    num_requests: int = 256
    api_key: str | None = None
    src: str = "en"
    tgt: str = "zh"
    output_len: int = 32
    words: int = 40
    time_limit_s: float = 600.0
    timeout_s: float = 120.0
    processes: int = 0
    wait_workers: int = 0
    run_tag: str = ""

    def __post_init__(self) -> None:
        if not self.run_tag:
            object.__setattr__(self, "run_tag", secrets.token_hex(3))
        if not self.url.startswith(("http://", "https://")):
            raise InvalidInputError(f"--server must be an http(s) URL, got {self.url!r}", field="server")
        for name in ("concurrency", "num_requests", "output_len", "words"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise InvalidInputError(f"{name} must be a positive integer, got {value!r}", field=name)
        if not isinstance(self.processes, int) or self.processes < 0:
            raise InvalidInputError(f"processes must be >= 0 (0: automatic), got {self.processes!r}", field="processes")
        if not isinstance(self.wait_workers, int) or self.wait_workers < 0:
            raise InvalidInputError(f"wait_workers must be >= 0 (0: no wait), got {self.wait_workers!r}",
                                    field="wait_workers")
        if self.processes == 0:
            cap = max(1, (os.cpu_count() or 2) // 2)
            object.__setattr__(self, "processes", max(1, min(cap, self.concurrency // 64)))
        if self.processes > self.concurrency:
            raise InvalidInputError(f"processes ({self.processes}) must not exceed concurrency ({self.concurrency})",
                                    field="processes")
        for name in ("time_limit_s", "timeout_s"):
            if getattr(self, name) <= 0:
                raise InvalidInputError(f"{name} must be > 0, got {getattr(self, name)!r}", field=name)

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def payload(self, index: int) -> dict:
        """The body of request `index`: a text no other request, of this run or another, has."""
        rng = np.random.default_rng(index)  # the same words in every run: the same lengths
        words = [_WORDS[i] for i in rng.integers(0, len(_WORDS), size=self.words)]
        text = f"Report {self.run_tag}-{index}: " + " ".join(words) + "."
        return {
            "text": text, "src": self.src, "tgt": self.tgt, "use_cache": False, "retry": False,
            "sampling": {"max_tokens": self.output_len, "ignore_eos": True, "temperature": 0},
        }


def run_server_load(options: ServerLoadOptions, *, env: EnvInfo | None = None) -> ServerLoadResult:
    """Drive the server from `options.processes` load-generator processes and summarise.

    httpx costs ~2 ms of CPU per request, so one process tops out at a few hundred requests
    a second: below what a server on an H200 answers. Process k sends the requests whose
    index is k modulo the process count, with its share of the clients; all of them start
    at one agreed wall-clock time, and the run's wall time spans the first start to the last
    answer.
    """
    if options.wait_workers:
        wait_for_ready_workers(options.url, options.wait_workers, headers=options.headers)
    n = options.processes
    before = read_server_counters(options.url, options.headers)
    start_at = time.time() + (0.0 if n == 1 else 3.0)  # spawned workers import first
    if n == 1:
        parts = [_run_share(options, 0, start_at)]
    else:
        with ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("spawn")) as pool:
            parts = list(pool.map(_run_share, [options] * n, range(n), [start_at] * n))
    counters = read_server_counters(options.url, options.headers).since(before)
    return _summarise(options, parts, env, counters)


@dataclass
class _Share:
    """What one load-generator process saw."""

    latencies_s: list[float]
    errors: dict[str, int]
    usage: _Usage
    timed_out: bool
    started: float  # time.time()
    finished: float


def _run_share(o: ServerLoadOptions, k: int, start_at: float) -> _Share:
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one INFO line per request otherwise
    return asyncio.run(_drive(o, k, start_at))


async def _drive(o: ServerLoadOptions, k: int, start_at: float) -> _Share:
    headers = o.headers
    latencies: list[float] = []
    errors: Counter[str] = Counter()
    indices = iter(range(k, o.num_requests, o.processes))
    state = {"timed_out": False}
    usage = _Usage()
    # One client (one connection pool) per simulated user: httpcore's pool scans every
    # connection on each request, so a shared pool of hundreds made the load generator the
    # bottleneck it was meant to measure. They share one TLS context (building one costs ~20 ms).
    tls = ssl.create_default_context()
    clients = [httpx.AsyncClient(base_url=o.url.rstrip("/"), headers=headers, timeout=o.timeout_s, verify=tls,
                                 limits=httpx.Limits(max_connections=1, max_keepalive_connections=1))
               for _ in range(len(range(k, o.concurrency, o.processes)))]
    await asyncio.sleep(max(0.0, start_at - time.time()))
    started = time.time()
    deadline = time.perf_counter() + o.time_limit_s

    async def client_loop(client: httpx.AsyncClient) -> None:
        for index in indices:  # one event loop: the shared iterator needs no lock
            if time.perf_counter() > deadline:
                state["timed_out"] = True
                return
            t0 = time.perf_counter()
            try:
                resp = await client.post("/api/translate", json=o.payload(index))
            except httpx.HTTPError as exc:
                errors[type(exc).__name__] += 1
                continue
            if resp.status_code != 200:
                errors[str(resp.status_code)] += 1
                continue
            latencies.append(time.perf_counter() - t0)
            usage.add(resp)

    try:
        await asyncio.gather(*(client_loop(client) for client in clients))
    finally:
        await asyncio.gather(*(client.aclose() for client in clients))
    return _Share(latencies, dict(errors), usage, state["timed_out"], started, time.time())


def _summarise(o: ServerLoadOptions, parts: list[_Share], env: EnvInfo | None,
               counters: ServerCounters) -> ServerLoadResult:
    wall = max(p.finished for p in parts) - min(p.started for p in parts)
    ms = [t * 1e3 for p in parts for t in p.latencies_s]
    errors: Counter[str] = Counter()
    for p in parts:
        errors.update(p.errors)
    return ServerLoadResult(
        url=o.url, concurrency=o.concurrency, num_requests=o.num_requests, completed=len(ms),
        errors=sum(errors.values()), error_kinds=dict(errors), wall_s=wall, requests_per_s=len(ms) / wall,
        latency_ms_p50=percentile(ms, 50) if ms else None, latency_ms_p90=percentile(ms, 90) if ms else None,
        latency_ms_p99=percentile(ms, 99) if ms else None, latency_ms_mean=float(np.mean(ms)) if ms else None,
        completion_tokens=sum(p.usage.completion_tokens for p in parts),
        prompt_tokens=sum(p.usage.prompt_tokens for p in parts), segments=sum(p.usage.segments for p in parts),
        timed_out=any(p.timed_out for p in parts), processes=o.processes, env=env,
        server_cpu_s=counters.server_s, engine_cpu_s=counters.engine_s, engine_steps=counters.engine_steps,
        engine_prompt_tokens=counters.prompt_tokens, run_tag=o.run_tag,
    )


@dataclass
class _Usage:
    """What the completed responses reported: token counts and segments (engine requests)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    segments: int = 0

    def add(self, resp: httpx.Response) -> None:
        try:
            body = resp.json()
            usage = body.get("usage") or {}
            self.prompt_tokens += int(usage.get("prompt_tokens") or 0)
            self.completion_tokens += int(usage.get("completion_tokens") or 0)
            self.segments += sum(int(r.get("segments") or 0) for r in body.get("results") or [])
        except (ValueError, AttributeError, TypeError):
            pass
