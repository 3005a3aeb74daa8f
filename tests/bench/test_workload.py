"""The benchmark workload: prompt lengths, determinism, validation."""
from __future__ import annotations

import pytest

from hymt.bench.workload import Workload
from hymt.errors import InvalidInputError


def test_prompts_follow_the_requested_shape_and_are_reproducible():
    w = Workload(num_requests=50, prompt_len_min=5, prompt_len_max=9, output_len=3, batch1_requests=4, seed=3)
    prompts = w.prompts(vocab_size=100)
    assert len(prompts) == 50
    assert {len(p) for p in prompts} <= set(range(5, 10)) and len({len(p) for p in prompts}) > 1
    assert all(0 <= t < 100 for p in prompts for t in p)
    assert prompts == w.prompts(vocab_size=100)
    assert prompts != Workload(num_requests=50, prompt_len_min=5, prompt_len_max=9, seed=4).prompts(100)
    latency = w.latency_prompts(vocab_size=100)
    assert len(latency) == 5 and latency[0] != prompts[0]


def test_every_run_gets_its_own_prompts_so_the_prefix_cache_cannot_serve_a_timed_one():
    w = Workload(num_requests=200, prompt_len_min=8, prompt_len_max=12, batch1_requests=50)
    sets = [w.prompts(5000), w.warmup_prompts(5000, 200), w.closed_loop_prompts(5000), w.latency_prompts(5000)]
    heads = [{tuple(p[:4]) for p in prompts} for prompts in sets]
    for i, a in enumerate(heads):
        for b in heads[i + 1:]:
            assert not a & b


def test_sampling_forces_the_answer_length_greedily():
    params = Workload(output_len=7).sampling
    assert params.max_tokens == 7 and params.ignore_eos and params.greedy


@pytest.mark.parametrize("field,kwargs", [
    ("num_requests", {"num_requests": 0}),
    ("prompt_len_max", {"prompt_len_min": 10, "prompt_len_max": 5}),
    ("output_len", {"output_len": -1}),
])
def test_bad_values_name_the_field(field, kwargs):
    with pytest.raises(InvalidInputError) as err:
        Workload(**kwargs)
    assert err.value.field == field
