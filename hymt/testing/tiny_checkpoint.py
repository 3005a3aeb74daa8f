"""Tiny, deterministic checkpoints of each dense family, written the way real ones are laid out.

config.json keeps each family's real architecture fields (rope scaling, QK-norm, tied
embeddings, the 7B extra keys) at tiny sizes; the tokenizer carries the family's real
special-token strings; the chat template emulates the official one (docs/reference/models.md §5).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from hymt.errors import InvalidInputError
from hymt.testing.tokenizer_builder import added_special_ids, special_token_ids, tokenizer_json, tokenizer_vocab_size


@dataclass(frozen=True)
class TinyFamily:
    """What differs between families in a tiny checkpoint.

    Attributes:
        name: official model name.
        kind: tokenizer kind ("hy-1.8b" or "hy-7b").
        chat_template: file name under hymt/testing/chat_templates.
        size: "1.8B" or "7B": picks the real config fields.
    """

    name: str
    kind: str
    chat_template: str
    size: str


TINY_FAMILIES = (
    TinyFamily("HY-MT1.5-1.8B", "hy-1.8b", "hy_mt15_1.8b.jinja", "1.8B"),
    TinyFamily("HY-MT1.5-7B", "hy-7b", "hunyuan_7b.jinja", "7B"),
    TinyFamily("Hunyuan-MT-7B", "hy-7b", "hunyuan_7b.jinja", "7B"),
    TinyFamily("Hunyuan-MT-Chimera-7B", "hy-7b", "hunyuan_7b.jinja", "7B"),
    TinyFamily("Hy-MT2-1.8B", "hy-1.8b", "hy_mt2_1.8b.jinja", "1.8B"),
    TinyFamily("Hy-MT2-7B", "hy-7b", "hunyuan_7b.jinja", "7B"),
)

#: (bos, eos, pad, extra stop) token strings per tokenizer kind.
ROLE_TOKENS = {
    "hy-1.8b": ("<｜hy_begin▁of▁sentence｜>", "<｜hy_place▁holder▁no▁2｜>", "<｜hy_▁pad▁｜>", None),
    "hy-7b": ("<|startoftext|>", "<|eos|>", "<|pad|>", "<|endoftext|>"),
}

TINY_SIZES = dict(
    hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
    num_key_value_heads=2, head_dim=16, attention_head_dim=16, max_position_embeddings=2048,
)


def tiny_family(name: str) -> TinyFamily:
    for family in TINY_FAMILIES:
        if family.name.lower() == str(name).lower():
            return family
    valid = ", ".join(f.name for f in TINY_FAMILIES)
    raise InvalidInputError(f"unknown family {name!r}; valid families: {valid}", field="family")


def architecture_fields(size: str) -> dict:
    """The family-level config fields that real checkpoints carry (docs/reference/models.md §2.1)."""
    base = {
        "architectures": ["HunYuanDenseV1ForCausalLM"],
        "model_type": "hunyuan_v1_dense",
        "hidden_act": "silu",
        "rms_norm_eps": 1e-05,
        "rope_theta": 10000.0,
        "use_qk_norm": True,
        "use_cla": False,
        "attention_bias": False,
        "mlp_bias": False,
        "tie_word_embeddings": True,
        "norm_type": "rms",
    }
    if size == "1.8B":
        base["rope_scaling"] = {"type": "dynamic", "alpha": 1000.0, "factor": 1.0}
    else:
        base["rope_scaling"] = {
            "alpha": 1000.0, "beta_fast": 32, "beta_slow": 1, "factor": 1.0,
            "mscale": 1.0, "mscale_all_dim": 1.0, "type": "dynamic",
        }
        base.update(
            cla_share_factor=2, add_classification_head=False, attention_dropout=0.1, class_num=0,
            dense_list=[4096, 0], pool_type="last", pretraining_tp=1, use_rotary_pos_emb=True,
            im_start_id=4, im_end_id=5, im_newline_id=11, mask_init_id=12, text_start_id=6, text_end_id=7,
        )
    return base


#: A tokenizer-free tiny hunyuan_v1_dense config.json, for random-weight engines in the engine
#: and benchmark tests (token ids in, token ids out; no checkpoint on disk needed).
ENGINE_TEST_CONFIG = dict(
    architectures=["HunYuanDenseV1ForCausalLM"], model_type="hunyuan_v1_dense", vocab_size=301,
    hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
    num_key_value_heads=2, head_dim=16, rope_theta=10000.0, rms_norm_eps=1e-5, hidden_act="silu",
    use_qk_norm=True, tie_word_embeddings=True, bos_token_id=1, eos_token_id=2, pad_token_id=0,
)


def tiny_config(family: str) -> dict:
    """config.json of the tiny checkpoint of `family`."""
    fam = tiny_family(family)
    ids = special_token_ids(fam.kind)
    bos, eos, pad, _ = ROLE_TOKENS[fam.kind]
    vocab_size = tokenizer_vocab_size(fam.kind)
    config = architecture_fields(fam.size) | TINY_SIZES
    config.update(
        vocab_size=vocab_size, bos_token_id=ids[bos], eos_token_id=ids[eos], pad_token_id=ids[pad],
        torch_dtype="float32", _name_or_path=f"tencent/{fam.name}",
    )
    if fam.size == "7B":
        config["org_vocab_size"] = vocab_size
        config["sep_token_id"] = ids["<|extra_0|>"]
    return config


def tiny_state_dict(family: str, seed: int = 0) -> dict:
    """Random float32 weights with the HF names, deterministic for `seed`.

    Scales are larger than a real init's 0.02 (projections 0.2, embeddings 0.5; norms 1 ± 0.05):
    at hidden size 64 that small a scale gives near-flat logits, and greedy near-ties make
    engine-vs-transformers comparisons flaky.
    """
    import torch

    config = tiny_config(family)
    gen = torch.Generator().manual_seed(seed)
    hidden, inter = config["hidden_size"], config["intermediate_size"]
    heads, kv, dim = config["num_attention_heads"], config["num_key_value_heads"], config["head_dim"]

    def randn(*shape, std=0.02):
        return torch.randn(*shape, generator=gen) * std

    def norm(n):
        return 1.0 + randn(n, std=0.05)

    # Embeddings larger than the rest so tiny logits are not flat (greedy ties break tests).
    state = {"model.embed_tokens.weight": randn(config["vocab_size"], hidden, std=0.5)}
    for i in range(config["num_hidden_layers"]):
        p = f"model.layers.{i}."
        state |= {
            p + "input_layernorm.weight": norm(hidden),
            p + "self_attn.q_proj.weight": randn(heads * dim, hidden, std=0.2),
            p + "self_attn.k_proj.weight": randn(kv * dim, hidden, std=0.2),
            p + "self_attn.v_proj.weight": randn(kv * dim, hidden, std=0.2),
            p + "self_attn.o_proj.weight": randn(hidden, heads * dim, std=0.2),
            p + "self_attn.query_layernorm.weight": norm(dim),
            p + "self_attn.key_layernorm.weight": norm(dim),
            p + "post_attention_layernorm.weight": norm(hidden),
            p + "mlp.gate_proj.weight": randn(inter, hidden, std=0.2),
            p + "mlp.up_proj.weight": randn(inter, hidden, std=0.2),
            p + "mlp.down_proj.weight": randn(hidden, inter, std=0.2),
        }
    state["model.norm.weight"] = norm(hidden)
    return state


def _generation_config(fam: TinyFamily, ids: dict[str, int]) -> dict:
    bos, eos, pad, extra = ROLE_TOKENS[fam.kind]
    eos_ids = [ids[eos]] + ([ids[extra]] if extra else [])
    return {
        "bos_token_id": ids[bos], "eos_token_id": eos_ids, "pad_token_id": ids[pad],
        "do_sample": True, "temperature": 0.7, "top_p": 0.6, "top_k": 20, "repetition_penalty": 1.05,
    }


def _tokenizer_config(fam: TinyFamily, model_max_length: int) -> dict:
    bos, eos, pad, _ = ROLE_TOKENS[fam.kind]
    return {
        "tokenizer_class": "PreTrainedTokenizerFast", "bos_token": bos, "eos_token": eos,
        "pad_token": pad, "add_bos_token": False, "add_eos_token": False, "model_max_length": model_max_length,
    }


def save_weights_file(tensors: dict, path: Path) -> None:
    """One safetensors file, readable like the checkpoint's other files: safetensors creates
    it 0600, the JSON files get 0666 less the umask (0644 under the usual 022)."""
    from safetensors.torch import save_file

    save_file(tensors, str(path), metadata={"format": "pt"})
    umask = os.umask(0)
    os.umask(umask)
    path.chmod(0o666 & ~umask)


def _save_weights(directory: Path, state: dict, num_shards: int) -> None:
    names = list(state)
    if num_shards <= 1:
        save_weights_file(state, directory / "model.safetensors")
        return
    per = -(-len(names) // num_shards)
    weight_map, total = {}, 0
    for shard in range(num_shards):
        chunk = names[shard * per:(shard + 1) * per]
        file = f"model-{shard + 1:05d}-of-{num_shards:05d}.safetensors"
        save_weights_file({n: state[n] for n in chunk}, directory / file)
        weight_map |= {n: file for n in chunk}
        total += sum(state[n].numel() * state[n].element_size() for n in chunk)
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    (directory / "model.safetensors.index.json").write_text(json.dumps(index, indent=2))


def _quantized_writers() -> dict:
    """Quantized weight writers, from hymt.testing.quantized when that module exists.

    Contract: `WRITERS[name](config, state) -> (config, state)` turns the float config and
    state dict into a quantized checkpoint's (adding `quantization_config`, packed tensors).
    """
    try:
        from hymt.testing.quantized import WRITERS
    except ModuleNotFoundError as exc:
        if exc.name != "hymt.testing.quantized":
            raise
        return {}
    return dict(WRITERS)


def write_tiny_checkpoint(
    directory, family: str = "HY-MT1.5-1.8B", *, seed: int = 0, quantization: str | None = None,
    num_shards: int = 1, include_lm_head: bool = False,
) -> Path:
    """Write a tiny checkpoint of `family` to `directory` and return the directory.

    `num_shards` > 1 splits the weights and writes model.safetensors.index.json;
    `include_lm_head` also stores the (tied) lm_head.weight, as some real checkpoints do.
    """
    fam = tiny_family(family)
    if num_shards < 1:
        raise InvalidInputError(f"num_shards must be >= 1, got {num_shards}", field="num_shards")
    config = tiny_config(fam.name)
    state = tiny_state_dict(fam.name, seed)
    if include_lm_head:
        state["lm_head.weight"] = state["model.embed_tokens.weight"].clone()
    if quantization is not None:
        writers = _quantized_writers()
        if quantization not in writers:
            valid = ", ".join(["None", *sorted(writers)])
            raise InvalidInputError(
                f"quantization {quantization!r} is not supported; valid: {valid}", field="quantization"
            )
        config, state = writers[quantization](config, state)
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    _save_weights(directory, state, num_shards)
    write_tiny_metadata(directory, fam.name, config)
    return directory


def write_tiny_metadata(directory, family: str, config: dict | None = None, *, tokenizer: str | None = None) -> Path:
    """Write every file but the weights: config, generation config, tokenizer, chat template.

    `tokenizer` is a tokenizer.json text (default: the family's tiny tokenizer); the
    generation config names the ids its special tokens have there.
    """
    fam = tiny_family(family)
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    config = tiny_config(fam.name) if config is None else config
    tokenizer = tokenizer_json(fam.kind) if tokenizer is None else tokenizer
    ids = added_special_ids(tokenizer)
    (directory / "config.json").write_text(json.dumps(config, indent=2, ensure_ascii=False), encoding="utf-8")
    (directory / "generation_config.json").write_text(json.dumps(_generation_config(fam, ids), indent=2))
    (directory / "tokenizer.json").write_text(tokenizer, encoding="utf-8")
    tok_config = _tokenizer_config(fam, int(config.get("max_position_embeddings", 2048)))
    (directory / "tokenizer_config.json").write_text(
        json.dumps(tok_config, indent=2, ensure_ascii=False), encoding="utf-8"
    )
    specials = {k: tok_config[k] for k in ("bos_token", "eos_token", "pad_token")}
    (directory / "special_tokens_map.json").write_text(
        json.dumps(specials, indent=2, ensure_ascii=False), encoding="utf-8"
    )
    template = resources.files("hymt.testing").joinpath("chat_templates", fam.chat_template).read_text("utf-8")
    (directory / "chat_template.jinja").write_text(template, encoding="utf-8")
    return directory
