"""Small budgets shrink the step sizes the user left at their defaults."""
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
