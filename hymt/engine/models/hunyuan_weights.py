"""Where each HF checkpoint tensor of a Hunyuan dense model goes in the native model.

Separate q/k/v and gate/up projections land in row ranges of the fused weights. Legacy fused
names (`qkv_proj` interleaved per KV head as [group q heads, k, v]; `gate_and_up_proj` stored
[up; gate]) are split on the device first (models.md §3.1; vLLM's hunyuan loader reads them
the same way).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import torch

from hymt.engine.models.hunyuan_dense import HunyuanDenseForCausalLM

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


def weight_targets(model: HunyuanDenseForCausalLM) -> dict[str, Target]:
    """HF name -> Target for every tensor the model needs from a checkpoint."""
    cfg = model.config
    out: dict[str, Target] = {}

    def whole(name: str, t: torch.Tensor) -> None:
        out[name] = Target(t, 0, t.shape[0])

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
        params = [("weight", attn.qkv_proj.weight, attn.o_proj.weight, mlp.gate_up_proj.weight, mlp.down_proj.weight)]
        if cfg.attention_bias:
            params.append(("bias", attn.qkv_proj.bias, attn.o_proj.bias, None, None))
        if cfg.mlp_bias:
            params.append(("bias", None, None, mlp.gate_up_proj.bias, mlp.down_proj.bias))
        for kind, qkv_t, o_t, gu_t, down_t in params:
            if qkv_t is not None:
                out[f"{p}self_attn.q_proj.{kind}"] = Target(qkv_t, 0, q)
                out[f"{p}self_attn.k_proj.{kind}"] = Target(qkv_t, q, q + kv)
                out[f"{p}self_attn.v_proj.{kind}"] = Target(qkv_t, q + kv, q + 2 * kv)
                whole(f"{p}self_attn.o_proj.{kind}", o_t)
            if gu_t is not None:
                out[f"{p}mlp.gate_proj.{kind}"] = Target(gu_t, 0, inter)
                out[f"{p}mlp.up_proj.{kind}"] = Target(gu_t, inter, 2 * inter)
                whole(f"{p}mlp.down_proj.{kind}", down_t)
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
