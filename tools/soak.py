"""Soak a running `hymt serve` on this machine: steady mixed load for a bounded time, then a
report of requests, errors by status, latency and the memory of the server's processes.

    hymt make-test-model ./tiny --family HY-MT1.5-1.8B
    hymt serve --model ./tiny --max-tokens 16 &
    python tools/soak.py --url http://127.0.0.1:8000 --duration 600 --concurrency 4 --json soak.json

Loopback only (the RSS of the server's processes is read on this machine) and bounded
(--duration at most a day, --concurrency at most 64). The load mixes every protocol: the
native API (one text, batches, streams, glossaries, detection), OpenAI chat (rewritten and
raw) and completions, LibreTranslate, DeepL, DeepLX, Immersive, plus malformed requests (4xx
expected) and client disconnects mid-stream. Texts are unique, except a share that repeats
(cache hits).

Memory: the HTTP process's RSS comes from /metrics (process_resident_memory_bytes), the
engine process's from its pid in /api/status. Three phases keep one-time costs apart from
growth: (1) one auto-detected text per script the language detector has a model for: its
RSS step is the detector's one-time load (0 when the server built the models at start);
(2) --warmup seconds of load, which fill the caches and the allocator's arenas; (3) the
measured run, whose RSS growth, fitted over all samples, is extrapolated to an hour.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx

LOOPBACK = ("127.0.0.1", "localhost", "::1")
MAX_DURATION_S = 24 * 3600
MAX_CONCURRENCY = 64
SAMPLE_EVERY_S = 5.0
DETECTOR_SAMPLES = ("The weather is nice today, isn't it?", "Сегодня хорошая погода, правда?",
                    "الطقس جميل اليوم، أليس كذلك؟", "आज मौसम अच्छा है, है ना?")
WORDS = ("river", "window", "morning", "letter", "garden", "market", "train", "winter", "coffee", "music",
         "bridge", "paper", "forest", "doctor", "island", "summer", "station", "friend", "kitchen", "mountain")


@dataclass
class Tally:
    """What the load did: per kind, statuses and latencies."""

    statuses: Counter[tuple[str, int]] = field(default_factory=Counter)
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    transport_errors: Counter[str] = field(default_factory=Counter)

    def record(self, kind: str, status: int, seconds: float) -> None:
        self.statuses[(kind, status)] += 1
        self.latencies[kind].append(seconds)


class Load:
    """Request makers, one per kind; each returns the status it got."""

    def __init__(self, client: httpx.AsyncClient, rng: random.Random):
        self.client, self.rng, self.counter = client, rng, 0
        self.kinds: dict[str, tuple[int, Callable[[], Awaitable[int]]]] = {
            "native": (30, self.native), "native_batch": (8, self.native_batch), "stream": (10, self.stream),
            "glossary": (6, self.glossary), "detect": (5, self.detect), "chat": (8, self.chat),
            "chat_raw": (4, self.chat_raw), "completions": (4, self.completions), "libre": (8, self.libre),
            "deepl": (6, self.deepl), "deeplx": (3, self.deeplx), "imme": (4, self.imme),
            "repeat": (8, self.repeat), "malformed": (4, self.malformed), "disconnect": (2, self.disconnect),
        }

    def text(self) -> str:
        self.counter += 1
        words = self.rng.choices(WORDS, k=self.rng.randint(4, 14))
        return f"{' '.join(words).capitalize()} number {self.counter}."

    def pick(self) -> tuple[str, Callable[[], Awaitable[int]]]:
        names = list(self.kinds)
        name = self.rng.choices(names, weights=[self.kinds[n][0] for n in names])[0]
        return name, self.kinds[name][1]

    async def post(self, path: str, **kw: object) -> int:
        return (await self.client.post(path, **kw)).status_code  # type: ignore[arg-type]

    async def native(self) -> int:
        src = self.rng.choice(["en", "auto"])
        return await self.post("/api/translate", json={"text": self.text(), "src": src, "tgt": "de"})

    async def native_batch(self) -> int:
        return await self.post("/api/translate", json={"text": [self.text() for _ in range(8)], "tgt": "fr"})

    async def stream(self) -> int:
        async with self.client.stream("POST", "/api/translate/stream",
                                      json={"text": self.text(), "src": "en", "tgt": "ja"}) as r:
            async for _ in r.aiter_bytes():
                pass
            return r.status_code

    async def glossary(self) -> int:
        terms = {f"{w}": f"{w.upper()}-{i}" for i, w in enumerate(WORDS)}
        return await self.post("/api/translate", json={"text": self.text(), "src": "en", "tgt": "de",
                                                       "glossary": terms})

    async def detect(self) -> int:
        return await self.post("/api/detect", json={"text": self.rng.choice(DETECTOR_SAMPLES)})

    async def chat(self) -> int:
        content = f"Translate the following text into German:\n\n{self.text()}"
        return await self.post("/v1/chat/completions", json={"model": "m", "messages": [
            {"role": "user", "content": content}]})

    async def chat_raw(self) -> int:
        return await self.post("/v1/chat/completions", json={"model": "m", "max_tokens": 16, "stream": True,
                                                             "messages": [{"role": "user", "content": self.text()}]})

    async def completions(self) -> int:
        return await self.post("/v1/completions", json={"model": "m", "prompt": self.text(), "max_tokens": 16})

    async def libre(self) -> int:
        return await self.post("/translate", data={"q": self.text(), "source": "auto", "target": "es"})

    async def deepl(self) -> int:
        return await self.post("/v2/translate", json={"text": [self.text(), self.text()], "target_lang": "DE"})

    async def deeplx(self) -> int:
        return await self.post("/deeplx/translate", json={"text": self.text(), "source_lang": "EN",
                                                          "target_lang": "ZH"})

    async def imme(self) -> int:
        return await self.post("/imme", json={"text_list": [self.text(), "", self.text()], "target_lang": "zh-CN"})

    async def repeat(self) -> int:
        return await self.post("/api/translate", json={"text": "The same sentence again.", "src": "en", "tgt": "de"})

    async def malformed(self) -> int:
        bodies = [b'{"text": "x\\ud800", "tgt": "de"}', b'{"text": "x", "tgt": "de", "sampling": {"top_p": NaN}}',
                  b"[" * 5000 + b"]" * 5000, b'{"text": "x", "tgt": "klingon"}', b'{"text": 5}']
        return await self.post("/api/translate", content=self.rng.choice(bodies),
                               headers={"content-type": "application/json"})

    async def disconnect(self) -> int:
        """A client that reads one event of a stream and leaves."""
        async with self.client.stream("POST", "/api/translate/stream",
                                      json={"text": self.text(), "src": "en", "tgt": "de"}) as r:
            async for _ in r.aiter_bytes():
                break
            return r.status_code


class Memory:
    """RSS of the server's HTTP process (/metrics) and engine process (psutil), sampled."""

    def __init__(self, client: httpx.AsyncClient):
        self.client = client
        self.samples: list[tuple[float, int, int]] = []  # (monotonic time, http bytes, engine bytes)

    async def sample(self) -> tuple[int, int]:
        metrics = (await self.client.get("/metrics")).text
        http = next(int(float(line.split()[-1])) for line in metrics.splitlines()
                    if line.startswith("process_resident_memory_bytes"))
        engine = 0
        pid = (await self.client.get("/api/status")).json().get("engine_pid")
        if pid:
            try:
                import psutil

                engine = psutil.Process(pid).memory_info().rss
            except Exception:  # noqa: BLE001 - no psutil, or the engine restarting: reported as 0
                engine = 0
        self.samples.append((time.monotonic(), http, engine))
        return http, engine


async def run_for(seconds: float, load: Load, tally: Tally, concurrency: int, memory: Memory) -> None:
    end = time.monotonic() + seconds

    async def worker() -> None:
        while time.monotonic() < end:
            name, make = load.pick()
            started = time.perf_counter()
            try:
                status = await make()
            except httpx.HTTPError as exc:
                tally.transport_errors[f"{name}: {type(exc).__name__}"] += 1
                continue
            tally.record(name, status, time.perf_counter() - started)

    async def sampler() -> None:
        while time.monotonic() < end:
            await memory.sample()
            await asyncio.sleep(SAMPLE_EVERY_S)

    await asyncio.gather(sampler(), *(worker() for _ in range(concurrency)))


def _mb(value: float) -> float:
    return round(value / 2**20, 1)


def _slope_per_hour(samples: list[tuple[float, int, int]], index: int) -> float:
    """Least-squares growth of one RSS series, in MB per hour."""
    if len(samples) < 3:
        return 0.0
    xs = [s[0] for s in samples]
    ys = [s[index] for s in samples]
    slope = statistics.linear_regression(xs, ys).slope
    return round(slope * 3600 / 2**20, 1)


def summarize(tally: Tally, seconds: float) -> dict[str, object]:
    every = [x for values in tally.latencies.values() for x in values]
    by_status: Counter[int] = Counter()
    for (_, status), n in tally.statuses.items():
        by_status[status] += n
    per_kind = {}
    for kind, values in sorted(tally.latencies.items()):
        ordered = sorted(values)
        per_kind[kind] = {"requests": len(values), "p50_ms": round(ordered[len(ordered) // 2] * 1000, 1),
                          "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000, 1),
                          "statuses": {str(s): n for (k, s), n in sorted(tally.statuses.items()) if k == kind}}
    ordered = sorted(every)
    return {
        "seconds": round(seconds, 1),
        "requests": len(every),
        "requests_per_s": round(len(every) / seconds, 2) if seconds else 0.0,
        "by_status": {str(k): v for k, v in sorted(by_status.items())},
        "server_errors": sum(n for s, n in by_status.items() if s >= 500),
        "transport_errors": dict(tally.transport_errors),
        "p50_ms": round(ordered[len(ordered) // 2] * 1000, 1) if ordered else None,
        "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000, 1) if ordered else None,
        "per_kind": per_kind,
    }


async def soak(args: argparse.Namespace) -> dict[str, object]:
    headers = {"Authorization": f"Bearer {args.api_key}"} if args.api_key else {}
    limits = httpx.Limits(max_connections=args.concurrency + 4)
    async with httpx.AsyncClient(base_url=args.url, headers=headers, timeout=120, limits=limits) as client:
        if (await client.get("/ready")).status_code != 200:
            raise SystemExit(f"{args.url}/ready is not 200: start the server and wait for it")
        memory = Memory(client)
        start = await memory.sample()
        for text in DETECTOR_SAMPLES:  # phase 1: the detector's one-time load, if the server left it lazy
            await client.post("/api/translate", json={"text": text, "tgt": "de", "use_cache": False})
        after_detector = await memory.sample()
        load = Load(client, random.Random(args.seed))
        warm = Tally()
        await run_for(args.warmup, load, warm, args.concurrency, memory)  # phase 2
        after_warmup = await memory.sample()
        memory.samples.clear()
        tally = Tally()
        started = time.monotonic()
        await run_for(args.duration, load, tally, args.concurrency, memory)  # phase 3
        elapsed = time.monotonic() - started
        end = await memory.sample()
        status = (await client.get("/api/status")).json()
    measured = memory.samples
    return {
        "url": args.url, "concurrency": args.concurrency, "warmup_s": args.warmup,
        "load": summarize(tally, elapsed), "warmup_load": summarize(warm, args.warmup),
        "rss_mb": {
            "http": {"start": _mb(start[0]), "after_detector": _mb(after_detector[0]),
                     "after_warmup": _mb(after_warmup[0]), "end": _mb(end[0]),
                     "growth": _mb(end[0] - after_warmup[0]), "fit_mb_per_hour": _slope_per_hour(measured, 1)},
            "engine": {"start": _mb(start[1]), "after_detector": _mb(after_detector[1]),
                       "after_warmup": _mb(after_warmup[1]), "end": _mb(end[1]),
                       "growth": _mb(end[1] - after_warmup[1]), "fit_mb_per_hour": _slope_per_hour(measured, 2)},
        },
        "detector_one_time_mb": _mb(after_detector[0] - start[0]),
        "engine_restarts": status.get("engine_restarts"),
        "queue_depth_at_end": status.get("queue_depth"),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", default="http://127.0.0.1:8000", help="a hymt serve on this machine")
    p.add_argument("--duration", type=float, default=600.0, help="seconds of measured load (at most a day)")
    p.add_argument("--warmup", type=float, default=30.0, help="seconds of load before measuring")
    p.add_argument("--concurrency", type=int, default=4, help="clients at once (at most 64)")
    p.add_argument("--api-key", default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", default=None, metavar="PATH", help="also write the report here")
    args = p.parse_args(argv)
    host = urlsplit(args.url).hostname or ""
    if host not in LOOPBACK:
        p.error(f"--url must be a loopback address ({', '.join(LOOPBACK)}): the soak reads the server's memory")
    if not 0 < args.duration <= MAX_DURATION_S or not 0 <= args.warmup <= 3600:
        p.error(f"--duration must be in (0, {MAX_DURATION_S}] and --warmup in [0, 3600]")
    if not 1 <= args.concurrency <= MAX_CONCURRENCY:
        p.error(f"--concurrency must be in 1..{MAX_CONCURRENCY}")
    report = asyncio.run(soak(args))
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        with open(args.json, "w") as out:
            out.write(text + "\n")
    return 1 if report["load"]["server_errors"] else 0  # type: ignore[index]


if __name__ == "__main__":
    sys.exit(main())
