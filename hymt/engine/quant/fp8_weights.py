"""FP8 (e4m3) weights with per-output-channel scales and per-token activation quantization.

Symmetric: w = q * scale, q = round_to_e4m3(w / scale), scale = amax(row) / 448, so every
row uses the full e4m3 range. Activations get the same treatment per token at run time.
"""
from __future__ import annotations

import torch

FP8_DTYPE = getattr(torch, "float8_e4m3fn", None)
FP8_MAX = 448.0  # largest finite e4m3fn value
_TINY = 1e-12


def require_fp8() -> torch.dtype:
    if FP8_DTYPE is None:
        raise RuntimeError("this torch build has no float8_e4m3fn")
    return FP8_DTYPE


def quantize_fp8_rows(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """x [R, C] -> (q float8_e4m3fn [R, C], scale float32 [R, 1]) with x ~= q * scale."""
    dtype = require_fp8()
    xf = x.float()
    scale = (xf.abs().amax(dim=-1, keepdim=True) / FP8_MAX).clamp_min(_TINY)  # [R, 1]
    q = (xf / scale).clamp_(-FP8_MAX, FP8_MAX).to(dtype)
    return q, scale


def dequantize_fp8_rows(q: torch.Tensor, scale: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """(q [R, C], scale [R, 1] or [R]) -> [R, C] in `dtype`."""
    scale = scale.float().reshape(-1, 1)
    return (q.float() * scale).to(dtype)
