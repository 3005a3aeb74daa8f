"""Batch-1 latency: warm-up excluded, percentiles from per-request times."""
from __future__ import annotations

import pytest

from hymt.bench.latency import run_latency
from hymt.bench.workload import Workload
from hymt.engine.native_engine import NativeEngine
from hymt.testing import ENGINE_TEST_CONFIG


def test_latency_run_times_each_request_after_warmup():
    w = Workload(prompt_len_min=3, prompt_len_max=9, output_len=5, batch1_requests=4)
    prompts = w.latency_prompts(ENGINE_TEST_CONFIG["vocab_size"])
    engine = NativeEngine(dict(ENGINE_TEST_CONFIG), device="cpu", dtype="float32", random_weights=True)
    try:
        latency, throughput = run_latency(engine, prompts, w.sampling, "native")
        generated = engine.stats().generated_tokens_total
    finally:
        engine.close()
    assert latency.num_requests == 4 and latency.output_tokens_mean == 5
    assert generated == 5 * 5  # the warm-up request ran too
    assert 0 < latency.ttft_ms_p50 <= latency.ttft_ms_p90
    assert latency.ttft_ms_p50 <= latency.total_ms_p50 <= latency.total_ms_p90
    assert throughput.num_requests == 4 and throughput.output_tokens == 20
    assert throughput.requests_per_s == pytest.approx(4 / (latency.total_ms_mean * 4 / 1e3))


def test_latency_needs_more_prompts_than_warmup():
    with pytest.raises(ValueError, match="warm-up"):
        run_latency(None, [[1]], Workload().sampling, "x", warmup=1)
