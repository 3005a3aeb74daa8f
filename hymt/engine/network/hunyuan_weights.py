"""Where each HF checkpoint tensor of a Hunyuan dense model goes in the native model.

Separate q/k/v and gate/up projections land in row ranges of the fused weights. Legacy fused
names (`qkv_proj` interleaved per KV head as [group q heads, k, v]; `gate_and_up_proj` stored
[up; gate]) are split on the device first (docs/reference/models.md §3.1; vLLM's hunyuan loader reads them
the same way).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import torch
from torch import nn

from hymt.engine.layers.linear import Linear
from hymt.engine.network.hunyuan_dense import HunyuanDenseForCausalLM
from hymt.errors import ModelLoadError

# Saved by some trainers, never weights: skipped silently.
IGNORED_SUFFIXES = ("rotary_emb.inv_freq", "rotary_emb.cos_cached", "rotary_emb.sin_cached")
_LEGACY = re.compile(r"^model\.layers\.(\d+)\.(self_attn\.qkv_proj|mlp\.gate_and_up_proj)\.(weight|bias)$")


@dataclass(frozen=True)
class Target:
    """Rows [start, stop) of `tensor` receive the checkpoint tensor."""

    tensor: torch.Tensor
    start: int
    stop: int

    @property
    def view(self) -> torch.Tensor:
        return self.tensor[self.start : self.stop]

    def assign(self, name: str, tensor: torch.Tensor) -> None:
        dest = self.view
        _check_shape(name, tensor, tuple(dest.shape))
        dest.copy_(tensor)  # casts to the model dtype on the device


@dataclass(frozen=True)
class QuantizedRowsTarget:
    """Rows [start, stop) of a quantized projection: a float tensor is quantized on arrival."""

    module: nn.Module
    start: int
    stop: int

    def assign(self, name: str, tensor: torch.Tensor) -> None:
        _check_shape(name, tensor, (self.stop - self.start, self.module.in_features))
        self.module.load_float_rows(self.start, tensor)


def _check_shape(name: str, tensor: torch.Tensor, expected: tuple) -> None:
    if tuple(tensor.shape) != tuple(expected):
        raise ModelLoadError(f"checkpoint tensor {name} has shape {tuple(tensor.shape)}, expected {tuple(expected)}")


def weight_targets(
    model: HunyuanDenseForCausalLM, *, quantized_weights: bool = True
) -> dict[str, Target | QuantizedRowsTarget]:
    """HF name -> Target for every tensor the model needs from a checkpoint.

    Quantized projections get QuantizedRowsTarget entries for their float weights; with
    `quantized_weights=False` they get none (a pre-quantized checkpoint's own handler fills them).
    """
    cfg = model.config
    out: dict[str, Target] = {}

    def whole(name: str, t: torch.Tensor) -> None:
        out[name] = Target(t, 0, t.shape[0])

    def rows(name: str, module: nn.Module, kind: str, start: int, stop: int) -> None:
        if isinstance(module, Linear) or kind == "bias":
            out[name] = Target(getattr(module, kind), start, stop)
        elif quantized_weights:
            out[name] = QuantizedRowsTarget(module, start, stop)

    out["model.embed_tokens.weight"] = Target(model.embed_weight, 0, cfg.vocab_size)
    if not cfg.tie_word_embeddings:
        out["lm_head.weight"] = Target(model.lm_head.weight, 0, cfg.vocab_size)
    whole("model.norm.weight", model.norm.weight)
    q, kv, inter = cfg.q_size, cfg.kv_size, cfg.intermediate_size
    for i, layer in enumerate(model.layers):
        p = f"model.layers.{i}."
        attn, mlp = layer.self_attn, layer.mlp
        whole(p + "input_layernorm.weight", layer.input_layernorm.weight)
        whole(p + "post_attention_layernorm.weight", layer.post_attention_layernorm.weight)
        kinds = ["weight"] + (["bias"] if cfg.attention_bias or cfg.mlp_bias else [])
        for kind in kinds:
            if kind == "weight" or cfg.attention_bias:
                rows(f"{p}self_attn.q_proj.{kind}", attn.qkv_proj, kind, 0, q)
                rows(f"{p}self_attn.k_proj.{kind}", attn.qkv_proj, kind, q, q + kv)
                rows(f"{p}self_attn.v_proj.{kind}", attn.qkv_proj, kind, q + kv, q + 2 * kv)
                rows(f"{p}self_attn.o_proj.{kind}", attn.o_proj, kind, 0, cfg.hidden_size)
            if kind == "weight" or cfg.mlp_bias:
                rows(f"{p}mlp.gate_proj.{kind}", mlp.gate_up_proj, kind, 0, inter)
                rows(f"{p}mlp.up_proj.{kind}", mlp.gate_up_proj, kind, inter, 2 * inter)
                rows(f"{p}mlp.down_proj.{kind}", mlp.down_proj, kind, 0, cfg.hidden_size)
        if cfg.use_qk_norm:
            whole(p + "self_attn.query_layernorm.weight", attn.query_layernorm.weight)
            whole(p + "self_attn.key_layernorm.weight", attn.key_layernorm.weight)
    return out


def is_ignored(name: str, model: HunyuanDenseForCausalLM) -> bool:
    """Tensors a checkpoint may carry that the model does not use."""
    if name.endswith(IGNORED_SUFFIXES):
        return True
    # Tied checkpoints may still ship lm_head.weight; vLLM and transformers ignore it too.
    return name == "lm_head.weight" and model.config.tie_word_embeddings


def is_legacy(name: str) -> bool:
    """A legacy fused projection name (qkv_proj / gate_and_up_proj)."""
    return _LEGACY.match(name) is not None


def split_legacy(name: str, tensor: torch.Tensor, model: HunyuanDenseForCausalLM) -> dict[str, torch.Tensor]:
    """Legacy fused tensor -> {standard name: part}."""
    m = _LEGACY.match(name)
    cfg = model.config
    layer, module, kind = m.groups()
    p = f"model.layers.{layer}."
    if module == "mlp.gate_and_up_proj":
        up, gate = tensor.chunk(2, dim=0)
        return {f"{p}mlp.gate_proj.{kind}": gate, f"{p}mlp.up_proj.{kind}": up}
    group = cfg.num_heads // cfg.num_kv_heads
    w = tensor.reshape(cfg.num_kv_heads, group + 2, cfg.head_dim, *tensor.shape[1:])
    return {
        f"{p}self_attn.q_proj.{kind}": w[:, :group].reshape(cfg.q_size, *tensor.shape[1:]),
        f"{p}self_attn.k_proj.{kind}": w[:, group].reshape(cfg.kv_size, *tensor.shape[1:]),
        f"{p}self_attn.v_proj.{kind}": w[:, group + 1].reshape(cfg.kv_size, *tensor.shape[1:]),
    }
