"""transformers baselines: same weights as the native engine, and each run's figures."""
from __future__ import annotations

import torch

from hymt.bench.baselines import (
    CONTINUOUS,
    build_hf_model,
    continuous_batching_unavailable,
    native_weights_for_hf,
    run_baselines,
    run_continuous_batching,
)
from hymt.bench.workload import Workload
from hymt.engine.backends.transformers_engine import TransformersEngine
from hymt.engine.native_engine import NativeEngine
from hymt.engine.sampling import SamplingParams
from hymt.testing import ENGINE_TEST_CONFIG

WORKLOAD = Workload(num_requests=6, prompt_len_min=4, prompt_len_max=12, output_len=5, batch1_requests=2)


def native_and_hf():
    native = NativeEngine(dict(ENGINE_TEST_CONFIG), device="cpu", dtype="float32", random_weights=True)
    weights = native_weights_for_hf(native.runner.model)
    hf = build_hf_model(dict(ENGINE_TEST_CONFIG), torch.device("cpu"), torch.float32, state_dict=weights)
    return native, hf, weights


def test_hf_model_gets_the_native_random_weights_exactly():
    native, hf, weights = native_and_hf()
    try:
        hf_state = hf.state_dict()
        for name, tensor in weights.items():
            assert torch.equal(hf_state[name], tensor), name
        # Every HF weight came from the native model (tied head shares the embedding).
        assert set(hf_state) - set(weights) <= {"lm_head.weight"}
        prompts = WORKLOAD.prompts(ENGINE_TEST_CONFIG["vocab_size"])
        params = SamplingParams(max_tokens=6, ignore_eos=True)
        ours = [o.token_ids for o in native.generate(prompts, params)]
        theirs = [o.token_ids for o in TransformersEngine(hf, stop_token_ids=()).generate(prompts, params)]
        assert ours == theirs
    finally:
        native.close()


def test_run_baselines_measures_all_three_runs():
    native, hf, _ = native_and_hf()
    native.close()
    prompts = WORKLOAD.prompts(ENGINE_TEST_CONFIG["vocab_size"])
    lines = []
    runs = run_baselines(hf, WORKLOAD, prompts, batch1_requests=3, batch_size=4, log=lines.append)
    assert runs.skipped == ()
    names = [r.name for r in runs.throughput]
    assert names == ["transformers generate, batch 1", "transformers generate, padded batches of 4", CONTINUOUS]
    batch1, padded, cb = runs.throughput
    assert batch1.num_requests == 3 and "3 of 6" in batch1.note
    for r in (padded, cb):
        assert r.num_requests == 6 and r.output_tokens == 6 * WORKLOAD.output_len
        assert r.requests_per_s > 0 and r.prompt_tokens == sum(len(p) for p in prompts)
    assert runs.latency.num_requests == 3 and runs.latency.ttft_ms_p50 <= runs.latency.total_ms_p90
    assert len(lines) == 3


def test_continuous_batching_tokens_match_greedy_generate():
    _, hf, _ = native_and_hf()
    prompts = WORKLOAD.prompts(ENGINE_TEST_CONFIG["vocab_size"])[:3]
    result = run_continuous_batching(hf, prompts, 4)
    assert result.num_requests == 3 and result.output_tokens == 12


def test_missing_continuous_batching_is_a_clear_line():
    import transformers

    class OldModel(torch.nn.Linear):
        pass

    reason = continuous_batching_unavailable(OldModel(2, 2))
    assert reason == f"{CONTINUOUS}: not available in transformers {transformers.__version__}"
    assert run_continuous_batching(OldModel(2, 2), [[1, 2]], 2) == reason
