"""load_model: safetensors layouts, fused weights, tied/untied heads, errors, random weights."""
from __future__ import annotations

import json
import types

import pytest
import torch
from safetensors.torch import save_file

from hymt.engine.batch import ScheduledSeq, StepBatch
from hymt.engine.loader import load_model
from hymt.engine.network import allocate_kv_cache
from hymt.engine.step_inputs import build_step_inputs
from hymt.errors import InvalidInputError, ModelLoadError

CONFIG = dict(
    architectures=["HunYuanDenseV1ForCausalLM"], model_type="hunyuan_v1_dense", vocab_size=301,
    hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
    num_key_value_heads=2, head_dim=8, rope_theta=10000.0, rms_norm_eps=1e-5, hidden_act="silu",
    rope_scaling={"type": "dynamic", "alpha": 1000.0, "factor": 1.0}, use_qk_norm=True,
    tie_word_embeddings=True, torch_dtype="bfloat16",
)


def hf_state(cfg: dict, seed: int = 0) -> dict[str, torch.Tensor]:
    """Tensors under the HF names of a Hunyuan dense checkpoint."""
    g = torch.Generator().manual_seed(seed)
    h, inter, d = cfg["hidden_size"], cfg["intermediate_size"], cfg["head_dim"]
    q, kv = cfg["num_attention_heads"] * d, cfg["num_key_value_heads"] * d

    def r(*shape):
        return torch.randn(*shape, generator=g)

    state = {"model.embed_tokens.weight": r(cfg["vocab_size"], h), "model.norm.weight": 1 + 0.1 * r(h)}
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        state |= {
            p + "input_layernorm.weight": 1 + 0.1 * r(h), p + "post_attention_layernorm.weight": 1 + 0.1 * r(h),
            p + "self_attn.q_proj.weight": r(q, h), p + "self_attn.k_proj.weight": r(kv, h),
            p + "self_attn.v_proj.weight": r(kv, h), p + "self_attn.o_proj.weight": r(h, q),
            p + "self_attn.query_layernorm.weight": 1 + 0.1 * r(d),
            p + "self_attn.key_layernorm.weight": 1 + 0.1 * r(d),
            p + "mlp.gate_proj.weight": r(inter, h), p + "mlp.up_proj.weight": r(inter, h),
            p + "mlp.down_proj.weight": r(h, inter),
        }
    return state


def write(path, state: dict, cfg: dict = CONFIG, shards: int = 1):
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.json").write_text(json.dumps(cfg))
    if shards == 1:
        save_file(state, path / "model.safetensors")
        return path
    names = sorted(state)
    weight_map = {}
    for s in range(shards):
        file = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
        part = {n: state[n] for n in names[s::shards]}
        save_file(part, path / file)
        weight_map |= {n: file for n in part}
    (path / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    return path


def logits_of(model, ids=(3, 1, 4, 1, 5, 9, 2, 6)) -> torch.Tensor:
    caches = allocate_kv_cache(model, 4, 4, model.dtype, "cpu")
    inputs = build_step_inputs(StepBatch([ScheduledSeq(0, list(ids), 0, [2, 0], True)]), 4, "cpu", all_logits=True)
    with torch.no_grad():
        return model.compute_logits(model(inputs.input_ids, inputs.metadata, caches))


def test_single_file_fuses_projections(tmp_path):
    state = hf_state(CONFIG)
    model = load_model(write(tmp_path, state), "cpu", torch.float32)
    attn, mlp = model.layers[1].self_attn, model.layers[1].mlp
    p = "model.layers.1."
    assert torch.equal(attn.qkv_proj.weight, torch.cat(
        [state[p + f"self_attn.{n}_proj.weight"] for n in "qkv"]))
    gate_up = torch.cat([state[p + "mlp.gate_proj.weight"], state[p + "mlp.up_proj.weight"]])
    assert torch.equal(mlp.gate_up_proj.weight, gate_up)
    assert model.load_stats.num_tensors == len(state) and model.load_stats.seconds > 0


def test_shards_load_the_same_model(tmp_path):
    state = hf_state(CONFIG)
    one = load_model(write(tmp_path / "one", state), "cpu", torch.float32)
    three = load_model(write(tmp_path / "three", state, shards=3), "cpu", torch.float32)
    assert torch.equal(logits_of(one), logits_of(three))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, "fp32"])
def test_weights_are_cast_to_the_target_dtype(tmp_path, dtype):
    model = load_model(write(tmp_path, hf_state(CONFIG)), "cpu", dtype)
    want = torch.float32 if dtype == "fp32" else dtype
    assert {p.dtype for p in model.parameters()} == {want}
    assert model.dtype == want and logits_of(model).dtype == torch.float32


def test_auto_dtype_on_cpu_is_float32(tmp_path):
    assert load_model(write(tmp_path, hf_state(CONFIG)), "cpu", "auto").dtype == torch.float32


def test_tied_head_ignores_lm_head_and_is_padded(tmp_path):
    state = hf_state(CONFIG)
    tied = load_model(write(tmp_path / "a", state), "cpu", torch.float32)
    junk = load_model(write(tmp_path / "b", {**state, "lm_head.weight": torch.zeros(301, 32)}), "cpu", torch.float32)
    assert tied.lm_head.weight.shape == (384, 32)  # 301 rounded up to a multiple of 128
    assert torch.count_nonzero(tied.lm_head.weight[301:]) == 0
    assert torch.equal(tied.lm_head.weight[:301], state["model.embed_tokens.weight"])
    assert tied.embed_weight.data_ptr() == tied.lm_head.weight.data_ptr()  # one matrix in memory
    assert torch.equal(logits_of(tied), logits_of(junk))
    assert logits_of(tied).shape == (8, 301)


def test_untied_head_uses_lm_head(tmp_path):
    cfg = {**CONFIG, "tie_word_embeddings": False}
    state = hf_state(cfg)
    head = torch.randn(301, 32)
    model = load_model(write(tmp_path, {**state, "lm_head.weight": head}, cfg), "cpu", torch.float32)
    assert torch.equal(model.lm_head.weight[:301], head)
    assert torch.equal(model.embed_weight, state["model.embed_tokens.weight"])
    hidden = torch.randn(2, 32)
    assert torch.allclose(model.compute_logits(hidden), hidden @ head.T, atol=1e-5)


def test_untied_checkpoint_without_lm_head_names_it(tmp_path):
    cfg = {**CONFIG, "tie_word_embeddings": False}
    with pytest.raises(ModelLoadError, match="lm_head.weight"):
        load_model(write(tmp_path, hf_state(cfg), cfg), "cpu", torch.float32)


def test_legacy_fused_names_load_the_same_model(tmp_path):
    state = hf_state(CONFIG)
    legacy = dict(state)
    group, d, kv_heads = 2, 8, 2
    for i in range(2):
        p = f"model.layers.{i}."
        q, k, v = (legacy.pop(p + f"self_attn.{n}_proj.weight") for n in "qkv")
        # Per KV head: its group of q heads, then its k head, then its v head.
        per_head = [torch.cat([q.view(kv_heads, group * d, -1)[j], k.view(kv_heads, d, -1)[j],
                               v.view(kv_heads, d, -1)[j]]) for j in range(kv_heads)]
        legacy[p + "self_attn.qkv_proj.weight"] = torch.cat(per_head)
        gate, up = legacy.pop(p + "mlp.gate_proj.weight"), legacy.pop(p + "mlp.up_proj.weight")
        legacy[p + "mlp.gate_and_up_proj.weight"] = torch.cat([up, gate])
    plain = load_model(write(tmp_path / "plain", state), "cpu", torch.float32)
    fused = load_model(write(tmp_path / "fused", legacy), "cpu", torch.float32)
    for a, b in zip(plain.parameters(), fused.parameters()):
        assert torch.equal(a, b)


def test_missing_weight_is_named(tmp_path):
    state = hf_state(CONFIG)
    del state["model.layers.1.self_attn.key_layernorm.weight"]
    with pytest.raises(ModelLoadError, match=r"missing.*model\.layers\.1\.self_attn\.key_layernorm\.weight"):
        load_model(write(tmp_path, state), "cpu", torch.float32)


def test_unknown_weight_is_named(tmp_path):
    state = {**hf_state(CONFIG), "model.layers.0.mlp.extra.weight": torch.zeros(2)}
    with pytest.raises(ModelLoadError, match=r"model\.layers\.0\.mlp\.extra\.weight"):
        load_model(write(tmp_path, state), "cpu", torch.float32)


def test_wrong_shape_is_named(tmp_path):
    state = {**hf_state(CONFIG), "model.norm.weight": torch.ones(31)}
    with pytest.raises(ModelLoadError, match=r"model\.norm\.weight has shape \(31,\), expected \(32,\)"):
        load_model(write(tmp_path, state), "cpu", torch.float32)


def test_directory_without_weights_or_config(tmp_path):
    with pytest.raises(ModelLoadError, match="config.json"):
        load_model(tmp_path, "cpu", torch.float32)
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    with pytest.raises(ModelLoadError, match="no \\*.safetensors"):
        load_model(tmp_path, "cpu", torch.float32)


@pytest.mark.parametrize("change, field", [
    ({"model_type": "llama"}, "model_type"), ({"use_cla": True}, "use_cla"),
    ({"hidden_act": "gelu"}, "hidden_act"), ({"rope_scaling": {"type": "yarn", "factor": 4.0}}, "rope type"),
    ({"num_hidden_layers": 0}, "num_hidden_layers"), ({"num_key_value_heads": 3}, "num_key_value_heads"),
])
def test_unsupported_configs_are_refused(tmp_path, change, field):
    cfg = {**CONFIG, **change}
    with pytest.raises(ModelLoadError, match=field):
        load_model(write(tmp_path, hf_state(CONFIG), cfg), "cpu", torch.float32)


def test_bad_arguments_name_the_field(tmp_path):
    with pytest.raises(InvalidInputError) as e:
        load_model(write(tmp_path, hf_state(CONFIG)), "cpu", "int3")
    assert e.value.field == "dtype" and "bfloat16" in str(e.value)
    with pytest.raises(InvalidInputError, match="random_weights=True"):
        load_model(CONFIG, "cpu", torch.float32)


def test_checkpoint_object_is_accepted(tmp_path):
    path = write(tmp_path, hf_state(CONFIG))
    checkpoint = types.SimpleNamespace(path=path, config=CONFIG)  # the fields load_model reads
    assert torch.equal(logits_of(load_model(checkpoint, "cpu", torch.float32)),
                       logits_of(load_model(path, "cpu", torch.float32)))


def test_random_weights_real_scale_and_deterministic():
    cfg = {**CONFIG, "hidden_size": 256, "intermediate_size": 512, "num_attention_heads": 8, "head_dim": 32}
    a = load_model(cfg, "cpu", torch.bfloat16, random_weights=True)
    b = load_model(cfg, "cpu", torch.bfloat16, random_weights=True)
    assert a.load_stats.source == "random weights"
    w = a.layers[0].self_attn.qkv_proj.weight.float()
    assert w.shape == (8 * 32 + 2 * 2 * 32, 256) and 0.015 < w.std().item() < 0.025
    assert torch.all(a.layers[0].input_layernorm.weight == 1)
    logits = logits_of(a)
    assert torch.isfinite(logits).all() and torch.equal(logits, logits_of(b))


def test_quantization_without_quant_module_is_a_clear_error(tmp_path, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "hymt.engine.quant" else real(n, *a))
    with pytest.raises(InvalidInputError) as e:
        load_model(write(tmp_path, hf_state(CONFIG)), "cpu", torch.float32, quantization="int8")
    assert e.value.field == "quantization"
