"""EngineConfig: validation names the field, and the environment overrides read in one place."""
from __future__ import annotations

import pytest

from hymt.engine.config import EngineConfig, with_env_overrides
from hymt.errors import InvalidInputError


@pytest.mark.parametrize("change,field", [
    ({"max_num_seqs": 0}, "max_num_seqs"),
    ({"gpu_memory_utilization": 1.5}, "gpu_memory_utilization"),
    ({"quantization": "nf4"}, "quantization"),
    ({"overlap": "yes"}, "overlap"),
    ({"step_profile": "gpu"}, "step_profile"),
    ({"disable_triton": 1}, "disable_triton"),
    ({"max_num_seqs": 64, "max_num_batched_tokens": 32}, "max_num_batched_tokens"),
])
def test_bad_values_name_their_field(change, field):
    with pytest.raises(InvalidInputError) as e:
        EngineConfig(**change)
    assert e.value.field == field


def test_runtime_knobs_default_to_automatic_and_off():
    config = EngineConfig()
    assert (config.overlap, config.step_profile, config.disable_triton) == (None, "off", False)


@pytest.mark.parametrize("environ,expected", [
    ({}, (True, "cpu", False)),  # nothing set: the config stands
    ({"HYMT_OVERLAP": "0"}, (False, "cpu", False)),
    ({"HYMT_OVERLAP": "1", "HYMT_PROFILE": "0"}, (True, "off", False)),
    ({"HYMT_PROFILE": "1"}, (True, "sync", False)),
    ({"HYMT_PROFILE": "CPU "}, (True, "cpu", False)),
    ({"HYMT_DISABLE_TRITON": "1"}, (True, "cpu", True)),
    ({"HYMT_DISABLE_TRITON": "0", "HYMT_PROFILE": "off"}, (True, "off", False)),
])
def test_environment_overrides(environ, expected):
    config = EngineConfig(overlap=True, step_profile="cpu")
    got = with_env_overrides(config, environ)
    assert (got.overlap, got.step_profile, got.disable_triton) == expected
    if not environ:
        assert got is config


def test_environment_turns_a_configured_knob_off():
    got = with_env_overrides(EngineConfig(disable_triton=True), {"HYMT_DISABLE_TRITON": "0"})
    assert got.disable_triton is False
