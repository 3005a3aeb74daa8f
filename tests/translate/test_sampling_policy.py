"""Sampling choices and the per-segment policy: presets, explicit fields, scaled lengths, caps."""
from __future__ import annotations

import pytest

from hymt.engine.sampling import SamplingParams
from hymt.errors import InvalidInputError
from hymt.families import get_family
from hymt.translate.sampling_policy import Sampling, first_attempt

HYMT15 = get_family("HY-MT1.5-1.8B")


def attempt(sampling, tokens=10, cap=None):
    return first_attempt(Sampling.parse(sampling), HYMT15, lambda: tokens, cap)


def test_sampling_defaults():
    default = attempt(None)
    assert default.greedy and default.repetition_penalty == 1.05 and default.max_tokens == 94  # 3 * 10 + 64
    assert attempt(None, tokens=5000).max_tokens == 2048
    official = attempt("official")
    assert official.temperature == 0.7 and official.top_k == 20 and official.max_tokens == 94
    mine = SamplingParams(temperature=0.3, max_tokens=7)
    assert attempt(mine) == mine
    assert attempt({"max_tokens": 9}).max_tokens == 9
    with pytest.raises(InvalidInputError):
        Sampling.parse("hot")


def test_explicit_fields_keep_the_scaled_length():
    params = attempt({"temperature": 0.5, "top_p": 0.9}, tokens=20)
    assert (params.temperature, params.top_p, params.max_tokens) == (0.5, 0.9, 124)  # 3 * 20 + 64
    assert params.repetition_penalty == 1.05  # the greedy preset's, not set by the caller


def test_the_operator_cap_bounds_every_request():
    assert attempt(None, tokens=100, cap=50).max_tokens == 50
    assert attempt({"max_tokens": 500}, cap=50).max_tokens == 50
    assert attempt(SamplingParams(max_tokens=4), cap=50).max_tokens == 4
    assert attempt(None, tokens=1, cap=500).max_tokens == 67


def test_bad_fields_name_themselves():
    with pytest.raises(InvalidInputError) as err:
        Sampling(temperature=-1.0)
    assert err.value.field == "sampling.temperature"
    with pytest.raises(InvalidInputError) as err:
        Sampling.parse({"temprature": 0.5})
    assert err.value.field == "sampling.temprature" and "temperature" in str(err.value)
