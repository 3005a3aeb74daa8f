"""Real-shape random checkpoints: real config and vocabulary, loadable by the engine and by transformers.

Written with one layer and hidden size 64 so the tests stay small; the vocabulary is real.
"""
from __future__ import annotations

import json
import random

import pytest
import torch
from safetensors import safe_open

from hymt.checkpoint import load_checkpoint
from hymt.errors import InvalidInputError
from hymt.families import detect_family
from hymt.testing import real_shape_checkpoint_config, real_shape_config, write_real_shape_checkpoint
from hymt.testing.real_shape_checkpoint import plan_shards, tensor_specs
from hymt.testing.tokenizer_builder import tokenizer_vocab_size

torch.set_num_threads(2)

SMALL = dict(num_layers=1, hidden_size=64)
SHARD_BYTES = 8_000_000  # below the 15 MB embedding: several shards

# The real tokens at the real ids (docs/reference/models.md §2.1, §4, §6), written out independently of the code.
EXPECTED = {
    "HY-MT1.5-1.8B": dict(
        vocab=120818, bos=(120000, "<｜hy_begin▁of▁sentence｜>"), eos=(120020, "<｜hy_place▁holder▁no▁2｜>"),
        pad=(120002, "<｜hy_▁pad▁｜>"), stops=(120020,),
        prompt="<｜hy_begin▁of▁sentence｜><｜hy_User｜>Hi<｜hy_place▁holder▁no▁8｜>",
        markers={120006: "<｜hy_User｜>", 120007: "<｜hy_Assistant｜>"},
    ),
    "Hy-MT2-7B": dict(
        vocab=128167, bos=(127958, "<|startoftext|>"), eos=(127960, "<|eos|>"), pad=(127961, "<|pad|>"),
        stops=(127960, 127957), prompt="<|startoftext|>Hi<|extra_0|>",
        markers={127957: "<|endoftext|>", 127962: "<|extra_0|>"},
    ),
}
FAMILIES = tuple(EXPECTED)


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("real")
    return {f: write_real_shape_checkpoint(root / f, f, max_shard_bytes=SHARD_BYTES, **SMALL) for f in FAMILIES}


@pytest.fixture(scope="module")
def hf_tokenizers(written) -> dict:
    from transformers import AutoTokenizer

    return {f: AutoTokenizer.from_pretrained(written[f]) for f in FAMILIES}


@pytest.mark.parametrize("family", ["HY-MT1.5-1.8B", "Hunyuan-MT-7B"])
def test_full_size_plan_is_the_real_model(family):
    config = real_shape_checkpoint_config(family)
    assert config == real_shape_config(family)
    params = sum(s.nbytes for s in tensor_specs(config)) / 2
    expected = 1.791e9 if "1.8B" in family else 7.504e9  # docs/reference/models.md §2.1, tied embeddings
    assert abs(params - expected) / expected < 0.002
    shards = plan_shards(tensor_specs(config), 2 * 1024**3)
    assert all(sum(s.nbytes for s in shard) <= 2 * 1024**3 for shard in shards)
    assert len(shards) == (2 if "1.8B" in family else 8)


@pytest.mark.parametrize("family", FAMILIES)
def test_config_is_real_but_small(written, family):
    config = json.loads((written[family] / "config.json").read_text())
    want = EXPECTED[family]
    assert config["vocab_size"] == want["vocab"]
    assert (config["bos_token_id"], config["eos_token_id"], config["pad_token_id"]) == (
        want["bos"][0], want["eos"][0], want["pad"][0])
    assert (config["num_hidden_layers"], config["hidden_size"], config["head_dim"]) == (1, 64, 16)
    assert config["num_attention_heads"] == 4 * config["num_key_value_heads"]
    assert config["torch_dtype"] == "bfloat16" and config["tie_word_embeddings"] is True
    real = real_shape_config(family)
    for key in ("rope_scaling", "rope_theta", "use_qk_norm", "max_position_embeddings", "architectures"):
        assert config[key] == real[key]


@pytest.mark.parametrize("family", FAMILIES)
def test_weights_are_sharded_bf16_random(written, family):
    directory = written[family]
    index = json.loads((directory / "model.safetensors.index.json").read_text())
    config = json.loads((directory / "config.json").read_text())
    files = sorted(set(index["weight_map"].values()))
    assert len(files) >= 2 and not (directory / "model.safetensors").exists()
    assert set(index["weight_map"]) == {s.name for s in tensor_specs(config)}
    total = 0
    for file in files:
        with safe_open(str(directory / file), framework="pt") as f:
            tensors = {name: f.get_tensor(name) for name in f.keys()}
        assert all(index["weight_map"][n] == file for n in tensors)
        nbytes = sum(t.numel() * t.element_size() for t in tensors.values())
        assert nbytes <= SHARD_BYTES or len(tensors) == 1
        total += nbytes
        for name, t in tensors.items():
            assert t.dtype == torch.bfloat16
            if t.dim() == 1:
                assert torch.all(t == 1), name
            else:
                assert abs(t.float().std().item() - 0.02) < 0.002, name
    assert total == index["metadata"]["total_size"]
    embed = index["weight_map"]["model.embed_tokens.weight"]
    with safe_open(str(directory / embed), framework="pt") as f:
        assert f.get_slice("model.embed_tokens.weight").get_shape() == [EXPECTED[family]["vocab"], 64]


def test_native_engine_loads_and_generates_ids_that_decode(written):
    from hymt.engine import LLM, SamplingParams
    from hymt.engine.loader import load_model
    from hymt.engine.network.hunyuan_weights import weight_targets

    directory = written["HY-MT1.5-1.8B"]
    model = load_model(str(directory), device="cpu")
    with safe_open(str(directory / "model-00002-of-00002.safetensors"), framework="pt") as f:
        q = f.get_tensor("model.layers.0.self_attn.q_proj.weight")
    assert model.config.vocab_size == 120818 and model.load_stats.num_tensors == 13
    target = weight_targets(model)["model.layers.0.self_attn.q_proj.weight"]
    assert torch.equal(target.view, q.float())  # the file's weights, not a fresh init

    small = dict(max_num_seqs=2, max_num_batched_tokens=64, max_model_len=64, block_size=4, num_kv_blocks=40)
    with LLM(str(directory), device="cpu", **small) as llm:
        (out,) = llm.generate(["Translate: hello"], SamplingParams(max_tokens=6, ignore_eos=True))
        assert len(out.token_ids) == 6 and all(0 <= i < 120818 for i in out.token_ids)
        assert out.text == llm.decode(out.token_ids)
        assert llm.engine.stop_token_ids == (120020,)


@pytest.mark.parametrize("family", FAMILIES)
def test_both_tokenizers_see_the_full_vocabulary(written, hf_tokenizers, family):
    size = EXPECTED[family]["vocab"]
    tok = load_checkpoint(written[family]).tokenizer
    assert tok.get_vocab_size() == size
    assert all(tok.id_to_token(i) is not None for i in range(size))
    assert tok.id_to_token(size) is None
    hf = hf_tokenizers[family]
    assert len(hf) == size
    assert hf.convert_ids_to_tokens(size - 1) == tok.id_to_token(size - 1)


@pytest.mark.parametrize("family", FAMILIES)
def test_named_special_ids_decode_to_the_real_tokens(written, hf_tokenizers, family):
    want = EXPECTED[family]
    ckpt = load_checkpoint(written[family])
    named = {want[k][0]: want[k][1] for k in ("bos", "eos", "pad")} | want["markers"]
    gen = ckpt.generation_config
    ids = [ckpt.config["bos_token_id"], ckpt.config["eos_token_id"], ckpt.config["pad_token_id"],
           gen["bos_token_id"], gen["pad_token_id"], *gen["eos_token_id"]]
    if "sep_token_id" in ckpt.config:
        ids.append(ckpt.config["sep_token_id"])
    assert set(ids) <= set(named), (ids, named)
    for token_id, text in named.items():
        assert ckpt.decode([token_id], skip_special_tokens=False) == text
        assert ckpt.special_tokens[text] == token_id
        assert hf_tokenizers[family].convert_ids_to_tokens(token_id) == text
    assert ckpt.eos_token_ids == want["stops"]


@pytest.mark.parametrize("family", FAMILIES)
def test_random_ids_over_the_whole_range_decode(written, hf_tokenizers, family):
    size = EXPECTED[family]["vocab"]
    ckpt = load_checkpoint(written[family])
    rng = random.Random(7)
    ids = [0, size - 1] + [rng.randrange(size) for _ in range(500)]
    text = ckpt.decode(ids)
    assert isinstance(text, str) and len(text) > 500
    assert hf_tokenizers[family].decode(ids, skip_special_tokens=True) == text
    trained = tokenizer_vocab_size("hy-1.8b" if "1.8B" in family else "hy-7b")  # ids above: fillers, specials
    fillers = [i for i in ids if i >= trained and i not in ckpt.special_tokens.values()]
    assert all(ckpt.decode([i]).startswith(" ") and ckpt.decode([i]).strip().isalpha() for i in fillers)
    assert len({ckpt.decode([i]) for i in fillers}) == len(set(fillers))


@pytest.mark.parametrize("family", FAMILIES)
def test_chat_format_renders_and_stop_ids_resolve(written, hf_tokenizers, family):
    want = EXPECTED[family]
    ckpt = load_checkpoint(written[family])
    fam = detect_family(ckpt)
    assert fam.name == family
    prompt = fam.render_chat("Hi", ckpt)
    assert prompt == want["prompt"]
    hf_prompt = hf_tokenizers[family].apply_chat_template(
        [{"role": "user", "content": "Hi"}], tokenize=False, add_generation_prompt=fam.add_generation_prompt)
    assert hf_prompt == prompt
    ids = ckpt.encode(prompt)
    assert ids[0] == want["bos"][0] and ckpt.decode(ids, skip_special_tokens=False) == prompt
    assert ckpt.decode(ids) == "Hi"
    assert fam.stop_token_ids(ckpt) == want["stops"]


def test_text_encodes_as_with_the_tiny_tokenizer(written, tmp_path):
    from hymt.testing import write_tiny_checkpoint

    tiny = load_checkpoint(write_tiny_checkpoint(tmp_path / "tiny", "HY-MT1.5-1.8B"))
    real = load_checkpoint(written["HY-MT1.5-1.8B"])
    text = "Translate the following segment into Chinese, without additional explanation. 今天天气真好 👋"
    assert real.encode(text) == tiny.encode(text)
    assert real.decode(real.encode(text)) == text


def test_same_seed_same_weights(tmp_path):
    a = write_real_shape_checkpoint(tmp_path / "a", "Hy-MT2-1.8B", seed=3, num_layers=1, hidden_size=16)
    b = write_real_shape_checkpoint(tmp_path / "b", "Hy-MT2-1.8B", seed=3, num_layers=1, hidden_size=16)
    c = write_real_shape_checkpoint(tmp_path / "c", "Hy-MT2-1.8B", seed=4, num_layers=1, hidden_size=16)
    name = "model-00001-of-00001.safetensors"
    assert (a / name).read_bytes() == (b / name).read_bytes() != (c / name).read_bytes()
    assert (a / "tokenizer.json").read_bytes() == (c / "tokenizer.json").read_bytes()


def test_progress_bar_on_stderr(tmp_path, capsys):
    write_real_shape_checkpoint(tmp_path, "HY-MT1.5-7B", num_layers=1, hidden_size=16, progress=True)
    err = capsys.readouterr().err
    assert "writing shards" in err and "100%" in err


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"hidden_size": 0}, "hidden_size"),
    ({"num_layers": -1}, "num_layers"),
    ({"hidden_size": 8}, "hidden_size"),  # smaller than one 16-wide head
    ({"num_attention_heads": 16, "num_key_value_heads": 5}, "num_key_value_heads"),
    ({"max_shard_bytes": 0}, "max_shard_bytes"),
    ({"family": "Hy-MT2-30B-A3B"}, "family"),
])
def test_bad_options_name_the_field(tmp_path, kwargs, field):
    kwargs = {"family": "HY-MT1.5-1.8B", **kwargs}
    with pytest.raises(InvalidInputError) as info:
        write_real_shape_checkpoint(tmp_path / "m", kwargs.pop("family"), **kwargs)
    assert info.value.field == field
    assert not (tmp_path / "m").exists()
