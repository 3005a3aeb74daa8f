"""`hymt bench --server URL`: concurrent clients against a running hymt server's native API.

Each of `concurrency` clients posts `POST {url}/api/translate` one request after another
until `num_requests` have been sent or the time limit passes. Texts are unique, the
translation cache is turned off and the quality retry too (`"retry": false`), so every
request reaches the engine exactly once, as in the offline benchmark; the `sampling` field
forces the answer length (random-weight servers never stop on their own, and their noise
would fail the quality guard).
"""
from __future__ import annotations

import asyncio
import logging
import ssl
import time
from collections import Counter
from dataclasses import dataclass

import httpx
import numpy as np

from hymt.bench.results import EnvInfo, ServerLoadResult, percentile
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

    def __post_init__(self) -> None:
        if not self.url.startswith(("http://", "https://")):
            raise InvalidInputError(f"--server must be an http(s) URL, got {self.url!r}", field="server")
        for name in ("concurrency", "num_requests", "output_len", "words"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise InvalidInputError(f"{name} must be a positive integer, got {value!r}", field=name)
        for name in ("time_limit_s", "timeout_s"):
            if getattr(self, name) <= 0:
                raise InvalidInputError(f"{name} must be > 0, got {getattr(self, name)!r}", field=name)

    def payload(self, index: int) -> dict:
        """The body of request `index`: a text no other request of the run has."""
        rng = np.random.default_rng(index)
        words = [_WORDS[i] for i in rng.integers(0, len(_WORDS), size=self.words)]
        text = f"Report {index}: " + " ".join(words) + "."
        return {
            "text": text, "src": self.src, "tgt": self.tgt, "use_cache": False, "retry": False,
            "sampling": {"max_tokens": self.output_len, "ignore_eos": True, "temperature": 0},
        }


def run_server_load(options: ServerLoadOptions, *, env: EnvInfo | None = None) -> ServerLoadResult:
    """Drive the server and summarise what came back."""
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one INFO line per request otherwise
    return asyncio.run(_drive(options, env))


async def _drive(o: ServerLoadOptions, env: EnvInfo | None) -> ServerLoadResult:
    headers = {"Authorization": f"Bearer {o.api_key}"} if o.api_key else {}
    latencies: list[float] = []
    errors: Counter[str] = Counter()
    state = {"next": 0, "timed_out": False}
    usage = _Usage()
    # One client (one connection pool) per simulated user: httpcore's pool scans every
    # connection on each request, so a shared pool of hundreds made the load generator the
    # bottleneck it was meant to measure. They share one TLS context (building one costs ~20 ms).
    tls = ssl.create_default_context()
    clients = [httpx.AsyncClient(base_url=o.url.rstrip("/"), headers=headers, timeout=o.timeout_s, verify=tls,
                                 limits=httpx.Limits(max_connections=1, max_keepalive_connections=1))
               for _ in range(o.concurrency)]
    start = time.perf_counter()
    deadline = start + o.time_limit_s

    async def client_loop(client: httpx.AsyncClient) -> None:
        while state["next"] < o.num_requests:
            if time.perf_counter() > deadline:
                state["timed_out"] = True
                return
            index = state["next"]
            state["next"] += 1  # single event loop: no lock needed between awaits
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
    wall = time.perf_counter() - start
    ms = [t * 1e3 for t in latencies]
    return ServerLoadResult(
        url=o.url, concurrency=o.concurrency, num_requests=o.num_requests, completed=len(latencies),
        errors=sum(errors.values()), error_kinds=dict(errors), wall_s=wall, requests_per_s=len(latencies) / wall,
        latency_ms_p50=percentile(ms, 50) if ms else None, latency_ms_p90=percentile(ms, 90) if ms else None,
        latency_ms_p99=percentile(ms, 99) if ms else None, latency_ms_mean=float(np.mean(ms)) if ms else None,
        completion_tokens=usage.completion_tokens, prompt_tokens=usage.prompt_tokens, segments=usage.segments,
        timed_out=bool(state["timed_out"]), env=env,
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
