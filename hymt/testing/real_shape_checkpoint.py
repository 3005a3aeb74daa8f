"""Checkpoints of the real HY-MT shapes with random weights, for GPU benchmarks without downloads.

`hymt serve --model DIR` on one of these does the work the real model does: the real
config.json, bf16 weights of the real sizes (N(0, 0.02) matrices, unit norms, as the
engine's `init_random_weights`), the family's chat template, and a tokenizer that covers
the whole real vocabulary. The tokenizer is the tiny byte-level BPE stretched to the real
size (tokenizer_builder.padded_tokenizer_json): the family's special tokens sit at the real
ids, every other id decodes to a filler word, so whatever id a random model emits decodes.
Prompts encode with the tiny merges, so they are longer in tokens than with the real
tokenizer (about one token per byte outside the built-in corpus).

Weights are generated and written one shard at a time: host memory holds one shard
(`max_shard_bytes`, default 2 GiB) however large the model.
"""
from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from hymt.errors import InvalidInputError
from hymt.testing.real_shapes import real_shape_config
from hymt.testing.tiny_checkpoint import save_weights_file, tiny_family, write_tiny_metadata
from hymt.testing.tokenizer_builder import padded_tokenizer_json

#: Special-token ids of the real tokenizers (docs/reference/models.md §2.1, §4). Inferred, not yet read from
#: a real tokenizer.json: <｜hy_place▁holder▁no▁3｜> / no▁8 (placeholders counted up from no▁2 at
#: 120020) and <|extra_4|> / <|extra_5|> (counted up from <|extra_0|> at 127962).
REAL_SPECIAL_IDS = {
    "hy-1.8b": {
        "<｜hy_begin▁of▁sentence｜>": 120000,
        "<｜hy_▁pad▁｜>": 120002,
        "<｜hy_User｜>": 120006,
        "<｜hy_Assistant｜>": 120007,
        "<｜hy_place▁holder▁no▁2｜>": 120020,
        "<｜hy_place▁holder▁no▁3｜>": 120021,
        "<｜hy_place▁holder▁no▁8｜>": 120026,
    },
    "hy-7b": {
        "<|endoftext|>": 127957,
        "<|startoftext|>": 127958,
        "<|eos|>": 127960,
        "<|pad|>": 127961,
        "<|extra_0|>": 127962,
        "<|extra_4|>": 127966,
        "<|extra_5|>": 127967,
    },
}

RANDOM_STD = 0.02  # as hymt.engine.loader.RANDOM_INIT_STD: finite bf16 activations
DEFAULT_MAX_SHARD_BYTES = 2 * 1024**3
#: Head size used when a test shrinks hidden_size without naming the attention shape.
SMALL_HEAD_DIM = 16
_BF16_BYTES = 2


@dataclass(frozen=True)
class TensorSpec:
    """One checkpoint tensor: HF name, shape, and how it is filled ("normal" or "ones")."""

    name: str
    shape: tuple[int, ...]
    fill: str

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * _BF16_BYTES


def real_shape_checkpoint_config(
    family: str, *, num_layers: int | None = None, hidden_size: int | None = None,
    intermediate_size: int | None = None, num_attention_heads: int | None = None,
    num_key_value_heads: int | None = None, head_dim: int | None = None,
) -> dict:
    """real_shape_config(family) with the given sizes replaced; the vocabulary stays real.

    A smaller `hidden_size` brings its own attention and MLP shape unless given:
    SMALL_HEAD_DIM-wide heads, the real 4:1 grouped-query ratio and the family's real
    intermediate/hidden ratio.
    """
    config = real_shape_config(family)
    sizes = dict(num_hidden_layers=num_layers, hidden_size=hidden_size, intermediate_size=intermediate_size,
                 num_attention_heads=num_attention_heads, num_key_value_heads=num_key_value_heads,
                 head_dim=head_dim)
    for key, value in sizes.items():
        if value is not None:
            _check_positive("num_layers" if key == "num_hidden_layers" else key, value)
    if hidden_size is not None:
        ratio = config["intermediate_size"] / config["hidden_size"]
        dim = head_dim or (hidden_size // num_attention_heads if num_attention_heads else SMALL_HEAD_DIM)
        heads = num_attention_heads or hidden_size // dim
        if heads < 1 or dim < 1:
            raise InvalidInputError(
                f"hidden_size {hidden_size} is smaller than one head ({dim}); pass head_dim", field="hidden_size"
            )
        config.update(intermediate_size=int(hidden_size * ratio), num_attention_heads=heads,
                      num_key_value_heads=max(1, heads // 4), head_dim=dim)
        if "dense_list" in config:
            config["dense_list"] = [hidden_size, 0]
    config.update({key: value for key, value in sizes.items() if value is not None})
    config["attention_head_dim"] = config["head_dim"]
    if config["num_attention_heads"] % config["num_key_value_heads"]:
        raise InvalidInputError(
            f"num_attention_heads ({config['num_attention_heads']}) must be a multiple of "
            f"num_key_value_heads ({config['num_key_value_heads']})", field="num_key_value_heads",
        )
    return config


def _check_positive(field: str, value) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise InvalidInputError(f"{field} must be a positive integer, got {value!r}", field=field)


def tensor_specs(config: dict) -> list[TensorSpec]:
    """Every tensor of a tied-embedding hunyuan_v1_dense checkpoint, in file order."""
    hidden, inter = config["hidden_size"], config["intermediate_size"]
    q = config["num_attention_heads"] * config["head_dim"]
    kv = config["num_key_value_heads"] * config["head_dim"]
    specs = [TensorSpec("model.embed_tokens.weight", (config["vocab_size"], hidden), "normal")]
    for i in range(config["num_hidden_layers"]):
        p = f"model.layers.{i}."
        specs += [
            TensorSpec(p + "input_layernorm.weight", (hidden,), "ones"),
            TensorSpec(p + "self_attn.q_proj.weight", (q, hidden), "normal"),
            TensorSpec(p + "self_attn.k_proj.weight", (kv, hidden), "normal"),
            TensorSpec(p + "self_attn.v_proj.weight", (kv, hidden), "normal"),
            TensorSpec(p + "self_attn.o_proj.weight", (hidden, q), "normal"),
            TensorSpec(p + "self_attn.query_layernorm.weight", (config["head_dim"],), "ones"),
            TensorSpec(p + "self_attn.key_layernorm.weight", (config["head_dim"],), "ones"),
            TensorSpec(p + "post_attention_layernorm.weight", (hidden,), "ones"),
            TensorSpec(p + "mlp.gate_proj.weight", (inter, hidden), "normal"),
            TensorSpec(p + "mlp.up_proj.weight", (inter, hidden), "normal"),
            TensorSpec(p + "mlp.down_proj.weight", (hidden, inter), "normal"),
        ]
    specs.append(TensorSpec("model.norm.weight", (hidden,), "ones"))
    return specs


def plan_shards(specs: list[TensorSpec], max_shard_bytes: int) -> list[list[TensorSpec]]:
    """Consecutive tensors grouped into shards of at most `max_shard_bytes` (a larger tensor
    gets a shard of its own)."""
    shards: list[list[TensorSpec]] = [[]]
    size = 0
    for spec in specs:
        if shards[-1] and size + spec.nbytes > max_shard_bytes:
            shards.append([])
            size = 0
        shards[-1].append(spec)
        size += spec.nbytes
    return shards


def _shard_tensors(shard: list[TensorSpec], gen) -> Iterator[tuple[str, object]]:
    import torch

    for spec in shard:
        if spec.fill == "ones":
            yield spec.name, torch.ones(spec.shape, dtype=torch.bfloat16)
        else:  # drawn in bf16 directly: no float32 copy of a 1 GB embedding
            yield spec.name, torch.empty(spec.shape, dtype=torch.bfloat16).normal_(0.0, RANDOM_STD, generator=gen)


def _write_weights(directory: Path, config: dict, seed: int, max_shard_bytes: int, progress: bool) -> None:
    import torch
    from tqdm import tqdm

    shards = plan_shards(tensor_specs(config), max_shard_bytes)
    total = sum(s.nbytes for shard in shards for s in shard)
    gen = torch.Generator().manual_seed(seed)
    weight_map: dict[str, str] = {}
    with tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc="writing shards",
              disable=not progress) as bar:
        for index, shard in enumerate(shards, 1):
            file = f"model-{index:05d}-of-{len(shards):05d}.safetensors"
            bar.set_postfix_str(file, refresh=False)
            tensors, drawn = {}, 0
            for name, tensor in _shard_tensors(shard, gen):
                tensors[name] = tensor
                step = tensor.numel() * _BF16_BYTES // 2  # drawing takes about half the time, saving the rest
                bar.update(step)
                drawn += step
            save_weights_file(tensors, directory / file)
            bar.update(sum(s.nbytes for s in shard) - drawn)
            weight_map |= {name: file for name in tensors}
            del tensors  # one shard in host memory at a time
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    (directory / "model.safetensors.index.json").write_text(json.dumps(index, indent=2))


def write_real_shape_checkpoint(
    directory, family: str = "HY-MT1.5-1.8B", *, seed: int = 0, num_layers: int | None = None,
    hidden_size: int | None = None, intermediate_size: int | None = None,
    num_attention_heads: int | None = None, num_key_value_heads: int | None = None,
    head_dim: int | None = None, max_shard_bytes: int = DEFAULT_MAX_SHARD_BYTES, progress: bool = False,
) -> Path:
    """Write a random-weight checkpoint of `family`'s real shape to `directory`; returns it.

    Args:
        family: official model name (case-insensitive), as for write_tiny_checkpoint.
        seed: weight seed; the same seed writes the same weights.
        num_layers, hidden_size, ...: smaller shapes for tests (see
            real_shape_checkpoint_config); the vocabulary and special ids stay real.
        max_shard_bytes: the largest shard (and about the host memory used).
        progress: show a tqdm bar (stderr) while the shards are written.
    """
    fam = tiny_family(family)
    _check_positive("max_shard_bytes", max_shard_bytes)
    config = real_shape_checkpoint_config(
        fam.name, num_layers=num_layers, hidden_size=hidden_size, intermediate_size=intermediate_size,
        num_attention_heads=num_attention_heads, num_key_value_heads=num_key_value_heads, head_dim=head_dim,
    )
    special_ids = REAL_SPECIAL_IDS[fam.kind]
    tokenizer = padded_tokenizer_json(fam.kind, config["vocab_size"], tuple(sorted(special_ids.items())))
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    write_tiny_metadata(directory, fam.name, config, tokenizer=tokenizer)
    _write_weights(directory, config, seed, max_shard_bytes, progress)
    return directory
