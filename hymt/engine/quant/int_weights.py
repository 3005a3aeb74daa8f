"""Group-wise integer weights: quantize, pack, unpack and dequantize (the torch reference).

Layout (shared by the CPU reference, the Triton kernels and the checkpoint loaders):
  int8:  qweight int8  [N, K], symmetric, w = q * scale
  int4:  qweight uint8 [N, K // 2], two weights a byte, k = 2j in the low nibble and
         k = 2j + 1 in the high one; q in 0..15 with an integer zero point per group,
         w = (q - zero) * scale
  scales / zeros: [N, K // group_size] in the model dtype
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

_INT8_MAX = 127
_INT4_MAX = 15
_TINY = 1e-10  # floor of a scale: an all-zero group quantizes to zeros, not NaN


@dataclass(frozen=True)
class IntWeights:
    """A quantized weight matrix in the layout above.

    Attributes:
        qweight: int8 [N, K] (8 bits) or uint8 [N, K // 2] (4 bits).
        scales: [N, K // group_size].
        zeros: [N, K // group_size] integer-valued (4 bits) or None (8 bits).
        bits / group_size: the format.
    """

    qweight: torch.Tensor
    scales: torch.Tensor
    zeros: torch.Tensor | None
    bits: int
    group_size: int


def quantize_int(w: torch.Tensor, bits: int, group_size: int, dtype: torch.dtype | None = None) -> IntWeights:
    """w [N, K] float -> IntWeights; scales in `dtype` (default w.dtype). Round to nearest."""
    n, k = w.shape
    if k % group_size:
        raise ValueError(f"in_features {k} is not a multiple of group_size {group_size}")
    dtype = dtype or w.dtype
    g = w.float().reshape(n, k // group_size, group_size)  # [N, groups, G]
    if bits == 8:
        scale = (g.abs().amax(dim=-1) / _INT8_MAX).clamp_min(_TINY)  # [N, groups]
        scale = scale.to(dtype).float()  # quantize against the scale actually stored
        q = torch.round(g / scale[..., None]).clamp_(-_INT8_MAX, _INT8_MAX).to(torch.int8)
        return IntWeights(q.reshape(n, k), scale.to(dtype), None, 8, group_size)
    if bits != 4:
        raise ValueError(f"bits must be 8 or 4, got {bits}")
    lo = g.amin(dim=-1).clamp(max=0.0)  # keep 0 representable: zero weights stay exact
    hi = g.amax(dim=-1).clamp(min=0.0)
    scale = ((hi - lo) / _INT4_MAX).clamp_min(_TINY).to(dtype).float()  # [N, groups]
    zero = torch.round(-lo / scale).clamp_(0, _INT4_MAX)
    q = (torch.round(g / scale[..., None]) + zero[..., None]).clamp_(0, _INT4_MAX).to(torch.uint8)
    return IntWeights(pack_int4(q.reshape(n, k)), scale.to(dtype), zero.to(dtype), 4, group_size)


def pack_int4(q: torch.Tensor) -> torch.Tensor:
    """q uint8 [N, K] with values 0..15 -> uint8 [N, K // 2] (even k low nibble)."""
    q = q.to(torch.uint8)
    return q[:, 0::2] | (q[:, 1::2] << 4)


def unpack_int4(packed: torch.Tensor) -> torch.Tensor:
    """uint8 [N, K // 2] -> uint8 [N, K] with values 0..15."""
    low = packed & 0xF
    high = packed >> 4
    return torch.stack((low, high), dim=-1).reshape(packed.shape[0], -1)


def dequantize_int(weights: IntWeights, dtype: torch.dtype) -> torch.Tensor:
    """IntWeights -> [N, K] in `dtype` (float32 arithmetic, one rounding at the end)."""
    q = unpack_int4(weights.qweight) if weights.bits == 4 else weights.qweight
    n, k = q.shape
    groups = k // weights.group_size
    qf = q.float().reshape(n, groups, weights.group_size)
    if weights.zeros is not None:
        qf = qf - weights.zeros.float()[..., None]
    return (qf * weights.scales.float()[..., None]).reshape(n, k).to(dtype)
