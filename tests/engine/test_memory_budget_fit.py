"""Small budgets shrink the step sizes the user left at their defaults."""
import torch

from hymt.engine.config import EngineConfig
from hymt.engine.memory import GB, estimate_weight_bytes, fit_config_to_budget

STEP_FIELDS = ("max_num_batched_tokens", "max_num_seqs", "cuda_graph_max_bs")


def steps(config: EngineConfig) -> tuple[int, int, int]:
    return tuple(getattr(config, name) for name in STEP_FIELDS)


def test_large_budget_keeps_the_config():
    config = EngineConfig()
    assert fit_config_to_budget(config, budget=135 * GB, weight_bytes=int(3.6 * GB)) is config


def test_under_8_gb_of_headroom_the_defaults_shrink():
    fitted = fit_config_to_budget(EngineConfig(), budget=8 * GB, weight_bytes=int(3.6 * GB))  # 4.4 GB left
    assert steps(fitted) == (4096, 256, 256)


def test_explicit_choices_survive_a_small_budget():
    config = EngineConfig(max_num_batched_tokens=8192, max_num_seqs=64)
    fitted = fit_config_to_budget(config, budget=8 * GB, weight_bytes=int(3.6 * GB))
    assert steps(fitted) == (8192, 64, 256)


def test_under_3_gb_of_headroom_the_tightest_sizes_apply():
    fitted = fit_config_to_budget(EngineConfig(), budget=8 * GB, weight_bytes=int(5.9 * GB))  # 2.1 GB left
    assert steps(fitted) == (2048, 128, 128)


def test_weight_estimate_counts_quantized_scales():
    from hymt.testing import real_shape_config

    config = real_shape_config("HY-MT1.5-7B")
    bf16 = estimate_weight_bytes(config, torch.bfloat16)
    int4 = estimate_weight_bytes(config, torch.bfloat16, "int4")
    int8 = estimate_weight_bytes(config, torch.bfloat16, "int8")
    assert int4 < int8 < bf16
    assert 4 * GB < int4 < 5.5 * GB  # 7B linears at ~0.53 bytes a weight + the tied bf16 embedding
