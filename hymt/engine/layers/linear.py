"""Linear layer as a small module wrapping one weight, so quantization can swap it.

`hymt.engine.quant` replaces `Linear` modules with quantized ones after load; the model
only ever calls `module(x)`, so any module with the same forward contract fits.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


def frozen_param(t: torch.Tensor) -> nn.Parameter:
    """An inference-only parameter (any dtype: packed ints and fp8 included)."""
    return nn.Parameter(t, requires_grad=False)


def fused_output_sizes(out_features: int, output_sizes: tuple[int, ...] | None) -> tuple[int, ...]:
    """The widths of the fused parts (default: one part); ValueError when they do not add up."""
    sizes = output_sizes or (out_features,)
    if sum(sizes) != out_features:
        raise ValueError(f"output_sizes {sizes} do not add up to out_features {out_features}")
    return sizes


class Linear(nn.Module):
    """y = x @ weight.T (+ bias); weight [out_features, in_features] in the model dtype.

    `output_sizes` records the fused parts (e.g. q, k, v widths) so a quantizer or a loader
    knows the row ranges of each original projection.
    """

    def __init__(
        self,
        in_features: int,
        out_features: int,
        *,
        bias: bool = False,
        output_sizes: tuple[int, ...] | None = None,
        device=None,
        dtype=None,
    ):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.output_sizes = fused_output_sizes(out_features, output_sizes)
        self.weight = frozen_param(torch.empty(out_features, in_features, device=device, dtype=dtype))
        self.bias = frozen_param(torch.empty(out_features, device=device, dtype=dtype)) if bias else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in={self.in_features}, out={self.output_sizes}, bias={self.bias is not None}"
