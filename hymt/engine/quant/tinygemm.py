"""int4 weights in the layout of torch's own int4 kernel (`aten._weight_int4pack_mm`, "tinygemm").

tinygemm is the CUDA kernel gpt-fast's int4 path runs on: mma-based, reading a tiled int32
layout made by `aten._convert_weight_to_int4pack`, with one (scale, offset) pair per group and
output row, w = (q - 8) * scale + offset. It ships in every CUDA build of torch (sm80+), so it
costs us no compiled code and launches like any aten op (a few microseconds, where a Triton
launch from Python costs tens).

Our int4 format (int_weights.py) is w = (q - zero) * scale with an integer zero per group,
which is the same line: offset = (8 - zero) * scale. The offset is rounded to bf16 once, an
error of at most 2^-9 of (8 - zero) * scale, well under the half-step int4 rounding itself.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from hymt.engine.quant.int_weights import IntWeights

#: K tiles per packed inner block; 8 is what gpt-fast uses (K must be a multiple of 8 * 16).
INNER_K_TILES = 8
#: Group sizes the kernel supports.
GROUP_SIZES = (32, 64, 128, 256)


@dataclass(frozen=True)
class TinygemmWeights:
    """An int4 weight [N, K] in tinygemm's layout.

    Attributes:
        packed: int32, the kernel's opaque tiled layout of the 4-bit values.
        scales_and_zeros: [K // group_size, N, 2] bf16: (scale, offset) per group and row.
        group_size: input columns per group.
    """

    packed: torch.Tensor
    scales_and_zeros: torch.Tensor
    group_size: int


def tinygemm_supports(w: IntWeights, dtype: torch.dtype) -> bool:
    """Whether `w` (with activations of `dtype`) can run on tinygemm on its device."""
    if w.bits != 4 or w.zeros is None or not w.qweight.is_cuda or dtype != torch.bfloat16:
        return False
    n, k = w.scales.shape[0], w.qweight.shape[1] * 2
    major, _ = torch.cuda.get_device_capability(w.qweight.device)
    return major >= 8 and w.group_size in GROUP_SIZES and k % (INNER_K_TILES * 16) == 0 and n % 8 == 0


def scales_and_offsets(w: IntWeights) -> torch.Tensor:
    """[N, groups] scales and integer zeros -> tinygemm's [groups, N, 2] (scale, (8 - zero) * scale) in bf16."""
    scale = w.scales.float()
    offset = (8.0 - w.zeros.float()) * scale
    return torch.stack((scale, offset), dim=-1).transpose(0, 1).contiguous().to(torch.bfloat16)


def packer_bytes(qweight: torch.Tensor) -> torch.Tensor:
    """Our packed uint8 [N, K // 2] (even k in the low nibble) -> the packer's input, which
    wants the even k in the HIGH nibble."""
    return ((qweight >> 4) | (qweight << 4)).contiguous()  # uint8: the bits shifted out drop


def to_tinygemm(w: IntWeights) -> TinygemmWeights:
    """Repack an int4 IntWeights (on a CUDA device) for `tinygemm_linear`."""
    packed = torch.ops.aten._convert_weight_to_int4pack(packer_bytes(w.qweight), INNER_K_TILES)
    return TinygemmWeights(packed, scales_and_offsets(w), w.group_size)


def tinygemm_linear(x: torch.Tensor, w: TinygemmWeights) -> torch.Tensor:
    """x [M, K] bf16 contiguous -> x @ W.T [M, N] bf16."""
    return torch.ops.aten._weight_int4pack_mm(x, w.packed, w.group_size, w.scales_and_zeros)
