"""Tiny checkpoints: real family fields at tiny sizes, loadable by hymt and by transformers."""
from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import load_file

from hymt.checkpoint import load_checkpoint
from hymt.errors import InvalidInputError
from hymt.testing import FAMILY_NAMES, tiny_config, tiny_state_dict, write_tiny_checkpoint

SEVEN_B = ("HY-MT1.5-7B", "Hunyuan-MT-7B", "Hunyuan-MT-Chimera-7B", "Hy-MT2-7B")


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("tiny")
    return {name: write_tiny_checkpoint(root / name, name) for name in FAMILY_NAMES}


def test_the_six_official_families():
    assert set(FAMILY_NAMES) == {
        "HY-MT1.5-1.8B", "HY-MT1.5-7B", "Hunyuan-MT-7B", "Hunyuan-MT-Chimera-7B", "Hy-MT2-1.8B", "Hy-MT2-7B",
    }


def test_unknown_family_lists_the_valid_ones(tmp_path):
    with pytest.raises(InvalidInputError, match="Hunyuan-MT-Chimera-7B") as info:
        write_tiny_checkpoint(tmp_path, "Hy-MT2-30B-A3B")
    assert info.value.field == "family"


def test_family_names_are_case_insensitive():
    assert tiny_config("hy-mt1.5-1.8b") == tiny_config("HY-MT1.5-1.8B")


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_config_has_real_fields_at_tiny_sizes(written, family):
    config = json.loads((written[family] / "config.json").read_text())
    assert config["architectures"] == ["HunYuanDenseV1ForCausalLM"]
    assert config["model_type"] == "hunyuan_v1_dense"
    assert (config["hidden_size"], config["intermediate_size"], config["num_hidden_layers"]) == (64, 128, 2)
    assert (config["num_attention_heads"], config["num_key_value_heads"], config["head_dim"]) == (4, 2, 16)
    assert config["use_qk_norm"] is True and config["use_cla"] is False
    assert config["tie_word_embeddings"] is True and config["torch_dtype"] == "float32"
    assert config["rope_theta"] == 10000.0 and config["rope_scaling"]["alpha"] == 1000.0
    assert config["vocab_size"] % 8 != 0
    if family in SEVEN_B:
        assert config["rope_scaling"]["beta_fast"] == 32 and config["dense_list"] == [4096, 0]
    else:
        assert config["rope_scaling"] == {"type": "dynamic", "alpha": 1000.0, "factor": 1.0}


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_loads_with_the_familys_own_token_ids(written, family):
    ckpt = load_checkpoint(written[family])
    assert ckpt.vocab_size == ckpt.tokenizer.get_vocab_size()
    if family in SEVEN_B:
        bos, eos, pad, stops = "<|startoftext|>", "<|eos|>", "<|pad|>", ("<|eos|>", "<|endoftext|>")
    else:
        bos, eos, pad = "<｜hy_begin▁of▁sentence｜>", "<｜hy_place▁holder▁no▁2｜>", "<｜hy_▁pad▁｜>"
        stops = (eos,)
    assert ckpt.bos_token_id == ckpt.special_tokens[bos] == ckpt.config["bos_token_id"]
    assert ckpt.config["eos_token_id"] == ckpt.special_tokens[eos]
    assert ckpt.pad_token_id == ckpt.special_tokens[pad]
    assert ckpt.eos_token_ids == tuple(ckpt.special_tokens[s] for s in stops)
    assert ckpt.generation_config["top_k"] == 20 and ckpt.generation_config["top_p"] == 0.6
    assert ckpt.tokenizer_config["add_bos_token"] is False and "chat_template" not in ckpt.tokenizer_config
    assert ckpt.chat_template


def _render(directory, messages, add_generation_prompt):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(directory)
    return tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=add_generation_prompt)


USER = [{"role": "user", "content": "Hi"}]
TURNS = [
    {"role": "system", "content": "S"}, {"role": "user", "content": "Hi"},
    {"role": "assistant", "content": "Yo"}, {"role": "user", "content": "Again"},
]
B, U, A, E2, E3, E8 = ("<｜hy_begin▁of▁sentence｜>", "<｜hy_User｜>", "<｜hy_Assistant｜>",
                       "<｜hy_place▁holder▁no▁2｜>", "<｜hy_place▁holder▁no▁3｜>", "<｜hy_place▁holder▁no▁8｜>")


@pytest.mark.parametrize(("family", "messages", "gen", "expected"), [
    ("Hunyuan-MT-7B", USER, False, "<|startoftext|>Hi<|extra_0|>"),
    ("Hy-MT2-7B", USER, True, "<|startoftext|>Hi<|extra_0|>"),
    ("HY-MT1.5-7B", TURNS, False, "<|startoftext|>S<|extra_4|>Hi<|extra_0|>Yo<|eos|><|startoftext|>Again<|extra_0|>"),
    ("Hy-MT2-1.8B", USER, True, f"{B}{U}Hi{A}"),
    ("Hy-MT2-1.8B", TURNS, True, f"{B}S{E3}{U}Hi{A}Yo{E2}{U}Again{A}"),
    ("HY-MT1.5-1.8B", USER, False, f"{B}{U}Hi{E8}"),
    ("HY-MT1.5-1.8B", USER, True, f"{B}{U}Hi{A}"),
    ("HY-MT1.5-1.8B", TURNS, False, f"{B}S{E3}{U}Hi{A}Yo{E2}{U}Again{E8}"),
])
def test_chat_template_matches_the_official_format(written, family, messages, gen, expected):
    assert _render(written[family], messages, gen) == expected


@pytest.mark.parametrize("family", ["HY-MT1.5-1.8B", "Hy-MT2-7B"])
def test_transformers_loads_and_generates(written, family):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(written[family])
    assert type(model).__name__ == "HunYuanDenseV1ForCausalLM"
    ckpt = load_checkpoint(written[family])
    ids = torch.tensor([ckpt.encode("Translate: hello")])
    out = model.generate(ids, max_new_tokens=6, do_sample=False, min_new_tokens=6)
    assert out.shape == (1, ids.shape[1] + 6)
    # Our weights, not a fresh init: the model's embedding is the file's.
    state = load_file(str(written[family] / "model.safetensors"))
    assert torch.equal(model.model.embed_tokens.weight, state["model.embed_tokens.weight"])
    assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr()


def test_weights_are_deterministic_for_a_seed():
    a, b, c = tiny_state_dict("Hy-MT2-1.8B", 0), tiny_state_dict("Hy-MT2-1.8B", 0), tiny_state_dict("Hy-MT2-1.8B", 1)
    assert a.keys() == b.keys()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not torch.equal(a["model.layers.0.self_attn.q_proj.weight"], c["model.layers.0.self_attn.q_proj.weight"])


def test_weight_names_shapes_and_scales():
    config = tiny_config("HY-MT1.5-7B")
    state = tiny_state_dict("HY-MT1.5-7B")
    assert state["model.embed_tokens.weight"].shape == (config["vocab_size"], 64)
    assert state["model.layers.1.self_attn.k_proj.weight"].shape == (2 * 16, 64)
    assert state["model.layers.1.self_attn.query_layernorm.weight"].shape == (16,)
    assert state["model.layers.0.mlp.down_proj.weight"].shape == (64, 128)
    assert "lm_head.weight" not in state
    assert all(t.dtype == torch.float32 for t in state.values())
    norm = state["model.norm.weight"]
    assert 0.9 < norm.mean() < 1.1 and 0 < norm.std() < 0.2
    assert state["model.layers.0.mlp.up_proj.weight"].std() < 0.5


def test_same_seed_writes_identical_files(tmp_path):
    a = write_tiny_checkpoint(tmp_path / "a", "Hunyuan-MT-7B", seed=3)
    b = write_tiny_checkpoint(tmp_path / "b", "Hunyuan-MT-7B", seed=3)
    for name in ("model.safetensors", "config.json", "tokenizer.json", "chat_template.jinja"):
        assert (a / name).read_bytes() == (b / name).read_bytes()


def test_shards_and_lm_head(tmp_path):
    directory = write_tiny_checkpoint(tmp_path, "Hy-MT2-1.8B", num_shards=2, include_lm_head=True)
    index = json.loads((directory / "model.safetensors.index.json").read_text())
    files = sorted(set(index["weight_map"].values()))
    assert files == ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
    assert not (directory / "model.safetensors").exists()
    merged = {}
    for file in files:
        merged |= load_file(str(directory / file))
    expected = tiny_state_dict("Hy-MT2-1.8B")
    assert set(merged) == set(expected) | {"lm_head.weight"} == set(index["weight_map"])
    assert torch.equal(merged["lm_head.weight"], expected["model.embed_tokens.weight"])
    assert index["metadata"]["total_size"] == sum(t.numel() * 4 for t in merged.values())


def test_transformers_loads_shards(tmp_path):
    from transformers import AutoModelForCausalLM

    directory = write_tiny_checkpoint(tmp_path, "HY-MT1.5-1.8B", num_shards=2, seed=5)
    model = AutoModelForCausalLM.from_pretrained(directory)
    expected = tiny_state_dict("HY-MT1.5-1.8B", 5)
    assert torch.equal(model.model.layers[1].mlp.down_proj.weight, expected["model.layers.1.mlp.down_proj.weight"])


@pytest.mark.parametrize(("kwargs", "field"),
                         [({"quantization": "awq"}, "quantization"), ({"num_shards": 0}, "num_shards")])
def test_bad_options(tmp_path, kwargs, field):
    with pytest.raises(InvalidInputError) as info:
        write_tiny_checkpoint(tmp_path, **kwargs)
    assert info.value.field == field
    if field == "quantization":
        assert "None" in str(info.value)
