import pytest

from hymt.engine.config import EngineConfig
from hymt.engine.factory import create_engine
from hymt.engine.native_engine import NativeEngine
from hymt.engine.sampling import SamplingParams
from hymt.errors import InvalidInputError


def test_unknown_backend_lists_the_valid_ones():
    with pytest.raises(InvalidInputError, match="native, transformers, openai") as e:
        create_engine("vllm", None)
    assert e.value.field == "backend"


def test_native_backend(tiny_config):
    engine = create_engine("native", dict(tiny_config), device="cpu", config=EngineConfig(num_kv_blocks=16),
                           random_weights=True)
    assert isinstance(engine, NativeEngine) and engine.config.num_kv_blocks == 16
    out = engine.generate([[1, 2, 3]], SamplingParams(max_tokens=2, ignore_eos=True))
    assert len(out[0].token_ids) == 2
    engine.close()


def test_openai_backend_needs_a_base_url():
    with pytest.raises(InvalidInputError, match="base_url") as e:
        create_engine("openai", None)
    assert e.value.field == "base_url"


@pytest.mark.parametrize("backend", ["transformers", "openai"])
def test_native_engine_settings_are_refused_by_other_backends(backend):
    with pytest.raises(InvalidInputError, match="quantization is a setting of the native engine") as e:
        create_engine(backend, None, config=EngineConfig(quantization="int8"), base_url="http://127.0.0.1:9")
    assert e.value.field == "quantization"


def test_the_prompt_budget_goes_to_every_backend():
    engine = create_engine("openai", None, config=EngineConfig(max_model_len=8192), base_url="http://127.0.0.1:9",
                           model="m", prompt_format="tokens")
    engine.close()


def test_openai_backend_is_built_lazily():
    from hymt.engine.backends.openai_engine import OpenAIEngine

    engine = create_engine("openai", None, base_url="http://127.0.0.1:9", model="m", prompt_format="tokens")
    assert isinstance(engine, OpenAIEngine)
    engine.close()


def test_the_entry_points_import_no_torch():
    """The CLI and the server read names, configs and types at start-up, before a model loads."""
    import subprocess
    import sys

    modules = ("factory", "interface", "config", "sampling", "outputs", "dtypes", "memory_report",
               "run_to_completion", "backend_names")
    code = "import sys; " + "; ".join(f"import hymt.engine.{m}" for m in modules) + "; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("backend", ["transformers", "openai"])
def test_only_the_native_backend_takes_a_config_dict(backend, tiny_config):
    with pytest.raises(InvalidInputError, match="config dict") as e:
        create_engine(backend, dict(tiny_config), base_url="http://127.0.0.1:9")
    assert e.value.field == "checkpoint"
