"""IntWeightLinear: a Linear whose weight is stored as group-wise int8 / int4 (int_weights.py).

Same forward contract as hymt.engine.layers.linear.Linear. On CUDA with Triton the packed
weight is read by the kernels of triton_int_matmul.py; elsewhere the weight is dequantized
for each call and multiplied in torch (the reference path, exact up to the final rounding).

The "int4" scheme, on a CUDA GPU (sm80+) in bf16, repacks the weight once loaded
(`finalize`) for torch's tinygemm kernel, which reads it 1.5-2x faster than cuBLAS reads bf16
at a few rows; more rows run Triton kernels reading the same words (tinygemm_kernels.py).
The repacked weight replaces ours, so memory stays at 4 bits a weight (docs/BENCHMARKS.md has
the H200 figures against our layout, which was the "int4-triton" scheme, and bf16). Where
tinygemm does not run, `finalize` leaves our layout in place.
"""
from __future__ import annotations

import functools
import importlib.util
import logging

import torch
import torch.nn.functional as F
from torch import nn

from hymt.engine.layers.linear import frozen_param, fused_output_sizes
from hymt.engine.quant.int_weights import IntWeights, dequantize_int, quantize_int
from hymt.engine.quant.schemes import QuantScheme, effective_group_size
from hymt.engine.quant.tinygemm import (
    SlotPermutation,
    TinygemmWeights,
    probe_tile_layout,
    row_slot_order,
    slot_permutation,
    tinygemm_supports,
    to_tinygemm,
)

_HAS_TRITON = importlib.util.find_spec("triton") is not None
log = logging.getLogger(__name__)


class IntWeightLinear(nn.Module):
    """y = x @ dequant(W).T (+ bias) with W stored as IntWeights rows.

    Rows are written part by part (`load_float_rows` quantizes a float part,
    `load_quantized_rows` takes an already quantized one), so fused q/k/v and gate/up
    weights never exist in float on the device.
    """

    def __init__(self, in_features: int, out_features: int, scheme: QuantScheme, *, bias: bool = False,
                 output_sizes: tuple[int, ...] | None = None, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.output_sizes = fused_output_sizes(out_features, output_sizes)
        self.bits = scheme.bits
        self.kernel = scheme.kernel
        self.group_size = effective_group_size(in_features, scheme.group_size)
        groups = in_features // self.group_size
        if self.bits == 4:
            qweight = torch.zeros(out_features, in_features // 2, device=device, dtype=torch.uint8)
        else:
            qweight = torch.zeros(out_features, in_features, device=device, dtype=torch.int8)
        self.qweight = frozen_param(qweight)  # [N, K] int8 or [N, K // 2] packed uint8
        self.scales = frozen_param(torch.zeros(out_features, groups, device=device, dtype=dtype))  # [N, groups]
        self.zeros = (  # [N, groups]
            frozen_param(torch.zeros(out_features, groups, device=device, dtype=dtype))
            if scheme.has_zero_point else None
        )
        self.bias = frozen_param(torch.zeros(out_features, device=device, dtype=dtype)) if bias else None
        self.tinygemm: TinygemmWeights | None = None
        self.tinygemm_perm: SlotPermutation | None = None

    @torch.no_grad()
    def finalize(self) -> None:
        """Called once every row is loaded: repack for tinygemm when the scheme asks for it and
        the device runs it (module docstring); otherwise nothing changes."""
        if self.kernel != "tinygemm" or self.tinygemm is not None or not _HAS_TRITON:
            return
        if not tinygemm_supports(self.weights, self.scales.dtype):
            return
        perm = _packer_slot_permutation(self.qweight.device)
        if perm is None:
            return
        tg = to_tinygemm(self.weights)
        self.tinygemm_perm = perm
        self.tinygemm_packed = frozen_param(tg.packed)  # parameters, so weight sizes count them
        self.tinygemm_scales = frozen_param(tg.scales_and_zeros)
        self.tinygemm = tg
        empty = torch.empty(0, device=self.scales.device)
        self.qweight = frozen_param(empty.to(self.qweight.dtype))
        self.scales = frozen_param(empty.to(self.scales.dtype))
        self.zeros = frozen_param(empty.to(self.scales.dtype))

    @property
    def weights(self) -> IntWeights:
        zeros = self.zeros.data if self.zeros is not None else None
        return IntWeights(self.qweight.data, self.scales.data, zeros, self.bits, self.group_size)

    @torch.no_grad()
    def load_float_rows(self, start: int, w: torch.Tensor) -> None:
        """Quantize float rows w [rows, K] into rows [start, start + rows)."""
        q = quantize_int(w.to(self.scales.device), self.bits, self.group_size, self.scales.dtype)
        self.load_quantized_rows(start, q)

    @torch.no_grad()
    def load_quantized_rows(self, start: int, q: IntWeights) -> None:
        """Store already quantized rows (same bits and group size) at [start, start + rows)."""
        if self.tinygemm is not None:
            raise RuntimeError("rows cannot be loaded after finalize() repacked the weight")
        if q.bits != self.bits or q.group_size != self.group_size:
            raise ValueError(
                f"rows quantized as {q.bits}-bit / group {q.group_size}, "
                f"layer is {self.bits}-bit / group {self.group_size}"
            )
        rows = q.scales.shape[0]
        self.qweight[start : start + rows].copy_(q.qweight)
        self.scales[start : start + rows].copy_(q.scales)
        if self.zeros is not None:
            if q.zeros is None:
                raise ValueError("int4 rows need zero points")
            self.zeros[start : start + rows].copy_(q.zeros)

    def dequantized_weight(self, dtype: torch.dtype) -> torch.Tensor:
        """The float weight [N, K] these rows stand for."""
        if self.tinygemm is not None:
            from hymt.engine.quant.tinygemm_kernels import tinygemm_dequantize

            return tinygemm_dequantize(self.tinygemm, self.tinygemm_perm, self.out_features, dtype)
        return dequantize_int(self.weights, dtype)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        lead = x.shape[:-1]
        x2 = x.reshape(-1, self.in_features)  # [M, K]
        if self.tinygemm is not None:
            from hymt.engine.quant.tinygemm_kernels import tinygemm_layer_linear

            out = tinygemm_layer_linear(x2.contiguous(), self.tinygemm, self.tinygemm_perm, self.out_features)
            out = out if self.bias is None else out + self.bias
        elif x2.is_cuda and _HAS_TRITON:
            from hymt.engine.quant.triton_int_matmul import int_linear_triton

            w = self.weights
            out = int_linear_triton(x2.contiguous(), w.qweight, w.scales, w.zeros, w.bits, w.group_size)
            if self.bias is not None:
                out = out + self.bias
        else:
            out = F.linear(x2, self.dequantized_weight(x2.dtype), self.bias)
        return out.reshape(*lead, self.out_features)

    def extra_repr(self) -> str:
        return (f"in={self.in_features}, out={self.output_sizes}, int{self.bits}, group={self.group_size}, "
                f"bias={self.bias is not None}, kernel={'tinygemm' if self.tinygemm is not None else 'triton'}")


@functools.cache
def _packer_slot_permutation(device: torch.device) -> SlotPermutation | None:
    """How the packer on `device` orders a row's weights (tinygemm.SlotPermutation), or None
    (with a warning) when its placement is one our kernels cannot read: the layer then keeps
    our layout."""
    try:
        slot_k = row_slot_order(probe_tile_layout(device))
    except RuntimeError as e:
        log.warning("int4 keeps its own layout and Triton kernels (no tinygemm): %s", e)
        return None
    perm = None if slot_k is None else slot_permutation(slot_k)
    if perm is None:
        log.warning("int4 keeps its own layout and Triton kernels (no tinygemm): torch's int4 packer does not "
                    "keep each row's weights of a tile in consecutive words, in an order that permutes the bits of k")
    return perm
