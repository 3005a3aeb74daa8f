"""Batch-1 latency: single requests one after another, nothing else in flight."""
from __future__ import annotations

import time

from hymt.bench.offline import sync
from hymt.bench.results import LatencyResult, ThroughputResult
from hymt.engine.interface import Engine
from hymt.engine.sampling import SamplingParams


def run_latency(
    engine: Engine, prompts: list[list[int]], params: SamplingParams, name: str, *, warmup: int = 1
) -> tuple[LatencyResult, ThroughputResult]:
    """Time each prompt alone after `warmup` untimed ones.

    Total latency is wall time around the call; time to first token is the engine's
    `first_token_time` stamp minus the call's start (both time.perf_counter). Also returns
    the run as a throughput figure: requests served one at a time, per second.
    """
    if len(prompts) <= warmup:
        raise ValueError(f"need more than {warmup} prompts for a latency run with {warmup} warm-up requests")
    for prompt in prompts[:warmup]:
        engine.generate([prompt], params)
    ttft, total, tokens, wall = [], [], [], 0.0
    timed = prompts[warmup:]
    for prompt in timed:
        sync()
        start = time.perf_counter()
        out = engine.generate([prompt], params)[0]
        sync()
        end = time.perf_counter()
        total.append(end - start)
        wall += end - start
        tokens.append(len(out.token_ids))
        if out.first_token_time is not None:  # engines without the stamp report no TTFT
            ttft.append(max(out.first_token_time - start, 0.0))
    latency = LatencyResult.from_samples(name, ttft, total, tokens)
    throughput = ThroughputResult.measure(
        name, len(timed), wall, sum(len(p) for p in timed), sum(tokens),
        note=f"one request at a time, {len(timed)} requests after {warmup} warm-up",
    )
    return latency, throughput
