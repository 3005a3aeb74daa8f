"""Rotary position embedding: NeoX rotate-half layout over all head dims, cos/sin in fp32.

Hunyuan dense checkpoints label their RoPE "dynamic" with an `alpha`; a fixed alpha only
stretches the base, at every position (docs/reference/models.md §3.1):
    base = rope_theta * alpha ** (head_dim / (head_dim - 2))
"""
from __future__ import annotations

import torch
from torch import nn

from hymt.errors import ModelLoadError

SUPPORTED_ROPE_TYPES = ("default", "dynamic")


def rope_base(config: dict, head_dim: int) -> float:
    """Effective RoPE base of a config.json (legacy `rope_scaling` or transformers-5 `rope_parameters`)."""
    params = {**(config.get("rope_scaling") or {}), **(config.get("rope_parameters") or {})}
    theta = float(params.get("rope_theta", config.get("rope_theta", 10000.0)))
    kind = params.get("rope_type") or params.get("type") or "default"
    if kind not in SUPPORTED_ROPE_TYPES:
        raise ModelLoadError(
            f"config.json rope type {kind!r} is not supported; valid: {SUPPORTED_ROPE_TYPES} "
            "(dynamic with a fixed alpha, as Hunyuan dense checkpoints ship)"
        )
    alpha = params.get("alpha")
    if kind == "dynamic" and alpha:
        return theta * float(alpha) ** (head_dim / (head_dim - 2))
    # "dynamic" without alpha is standard dynamic NTK, which changes nothing below
    # max_position_embeddings (262,144): the plain base.
    return theta


def inv_frequencies(base: float, head_dim: int, device=None) -> torch.Tensor:
    """[head_dim // 2] float32, computed the way transformers does (bit-identical)."""
    exponent = torch.arange(0, head_dim, 2, dtype=torch.int64).to(device=device, dtype=torch.float32) / head_dim
    return 1.0 / (base**exponent)


def apply_rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """x [T, heads, D] rotated by cos/sin [T, D/2] (fp32 math, result in x.dtype)."""
    x1, x2 = x.to(torch.float32).chunk(2, dim=-1)
    c, s = cos[:, None, :], sin[:, None, :]
    return torch.cat((x1 * c - x2 * s, x2 * c + x1 * s), dim=-1).to(x.dtype)


class RotaryEmbedding(nn.Module):
    """Holds inv_freq; cos/sin are computed per step from positions (no position-length table)."""

    def __init__(self, head_dim: int, base: float, *, device=None):
        super().__init__()
        self.head_dim = head_dim
        self.base = base
        self.register_buffer("inv_freq", inv_frequencies(base, head_dim, device), persistent=False)

    def cos_sin(self, positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """positions [T] int64 -> cos, sin [T, D/2] float32."""
        freqs = positions.to(torch.float32)[:, None] * self.inv_freq[None, :]
        return freqs.cos(), freqs.sin()

    def extra_repr(self) -> str:
        return f"head_dim={self.head_dim}, base={self.base:.6g}"
