"""64 concurrent clients served by the one engine of the session server, memory flat."""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import psutil

CLIENTS = 64
RSS_GROWTH_LIMIT_MB = 300


def _round(url: str, tag: str) -> list[int]:
    def one(i: int) -> int:
        payload = {"text": f"Sentence number {i} of round {tag}.", "src": "en", "tgt": "de",
                   "sampling": {"max_tokens": 4}, "use_cache": False}
        with httpx.Client(timeout=120) as c:
            r = c.post(f"{url}/api/translate", json=payload)
            assert r.status_code == 200, r.text
            assert r.json()["usage"]["completion_tokens"] >= 1
            return r.status_code

    with ThreadPoolExecutor(CLIENTS) as pool:
        return list(pool.map(one, range(CLIENTS)))


def _rss(process: psutil.Process) -> int:
    """The server's memory: its own and its children's (the engine runs in a child process)."""
    return sum(p.memory_info().rss for p in [process, *process.children(recursive=True)])


def test_64_concurrent_clients_one_engine_flat_memory(hymt_server):
    process = psutil.Process(hymt_server.proc.pid)
    assert process.children(recursive=True), "the engine runs in a child process of the server"
    _round(hymt_server.url, "warm-up")  # allocator pools, lazily built kernels, first batches
    then = hymt_server.wait_idle()
    before = _rss(process)
    started = time.perf_counter()
    statuses = _round(hymt_server.url, "measured")
    elapsed = time.perf_counter() - started
    after = _rss(process)
    now = hymt_server.wait_idle()
    growth_mb = (after - before) / 2**20
    # Counters, not a sampled gauge: 4-token answers finish between two polls of `running`.
    tokens = now["generated_tokens_total"] - then["generated_tokens_total"]
    steps = now["generation_steps_total"] - then["generation_steps_total"]
    print(f"\n{CLIENTS} concurrent clients: {elapsed:.2f} s; server RSS {before / 2**20:.0f} MB -> "
          f"{after / 2**20:.0f} MB ({growth_mb:+.1f} MB); {tokens} tokens in {steps} engine steps")
    assert statuses == [200] * CLIENTS
    assert tokens >= CLIENTS
    assert steps < tokens / 2, "concurrent requests share the engine's batch (mean batch over 2)"
    assert growth_mb < RSS_GROWTH_LIMIT_MB
    assert now["queue_depth"] == 0
