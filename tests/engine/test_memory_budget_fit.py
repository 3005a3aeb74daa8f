"""Small budgets shrink the step sizes the user left at their defaults."""
import torch

from hymt.engine.config import EngineConfig
from hymt.engine.memory import GB, SMALL_BUDGET_STEP, fit_config_to_budget


def test_large_budget_keeps_the_config():
    config = EngineConfig()
    assert fit_config_to_budget(config, budget=135 * GB, weight_bytes=int(3.6 * GB)) is config


def test_small_budget_shrinks_default_step_sizes():
    fitted = fit_config_to_budget(EngineConfig(), budget=8 * GB, weight_bytes=int(3.6 * GB))
    for name, value in SMALL_BUDGET_STEP.items():
        assert getattr(fitted, name) == value


def test_explicit_choices_survive_a_small_budget():
    config = EngineConfig(max_num_batched_tokens=8192, max_num_seqs=64)
    fitted = fit_config_to_budget(config, budget=8 * GB, weight_bytes=int(3.6 * GB))
    assert fitted.max_num_batched_tokens == 8192
    assert fitted.max_num_seqs == 64
    assert fitted.cuda_graph_max_bs == SMALL_BUDGET_STEP["cuda_graph_max_bs"]


def test_tighter_budget_takes_the_tightest_tier():
    from hymt.engine.memory import SMALL_BUDGET_TIERS

    # Weights leaving ~2 GB of an 8 GB budget: the 3 GB tier applies.
    fitted = fit_config_to_budget(EngineConfig(), budget=8 * GB, weight_bytes=int(5.9 * GB))
    for name, value in SMALL_BUDGET_TIERS[-1][1].items():
        assert getattr(fitted, name) == value


def test_weight_estimate_counts_quantized_scales():
    from hymt.engine.memory import estimate_weight_bytes
    from hymt.testing import real_shape_config

    config = real_shape_config("HY-MT1.5-7B")
    bf16 = estimate_weight_bytes(config, torch.bfloat16)
    int4 = estimate_weight_bytes(config, torch.bfloat16, "int4")
    int8 = estimate_weight_bytes(config, torch.bfloat16, "int8")
    assert int4 < int8 < bf16
    assert 4 * GB < int4 < 5.5 * GB  # 7B linears at ~0.53 bytes a weight + the tied bf16 embedding
