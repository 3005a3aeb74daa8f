"""open_model and the checks made before any model loads."""
from __future__ import annotations

import pytest

from hymt.errors import InvalidInputError
from hymt.eval.model_factory import ModelSettings, check_schemes, open_model, quantization_of


def test_open_model_builds_a_native_translator_per_scheme(tiny_dir):
    opened = open_model(ModelSettings(str(tiny_dir), device="cpu"), "int8")
    try:
        assert opened.weights_bytes > 0 and opened.translator.family.name == "HY-MT1.5-1.8B"
        result = opened.translator.translate_batch(["Hello."], "zh", "en", retry=False, use_cache=False)
        assert result[0].completion_tokens > 0
    finally:
        opened.translator.close()


def test_scheme_names():
    assert [quantization_of(s) for s in ("bf16", "none", "int8", "int4")] == [None, None, "int8", "int4"]


def test_every_scheme_runs_on_cpu(tiny_dir):
    check_schemes(ModelSettings(str(tiny_dir), device="cpu"), ("bf16", "fp8", "int8", "int4"), "--compare-quantization")


def test_settings_refusals(tiny_dir):
    with pytest.raises(InvalidInputError, match="--engine 'vllm'; valid: native, transformers, openai"):
        ModelSettings(str(tiny_dir), engine="vllm")
    with pytest.raises(InvalidInputError, match="--engine openai needs --base-url"):
        ModelSettings(str(tiny_dir), engine="openai")
    with pytest.raises(InvalidInputError, match="gpu_memory_gb must be > 0"):
        ModelSettings(str(tiny_dir), gpu_memory_gb=0)


def test_fingerprint_names_device_dtype_and_weight_files(tiny_dir):
    settings = ModelSettings(str(tiny_dir), device="cpu")
    before = settings.fingerprint()
    assert before["dtype"] == "float32" and before["device"] == "cpu" and before["files"]
    assert ModelSettings(str(tiny_dir), device="cpu", dtype="bfloat16").fingerprint() != before
