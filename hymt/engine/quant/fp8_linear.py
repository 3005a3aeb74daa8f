"""Fp8Linear: e4m3 weights with per-output-channel scales, per-token scaled e4m3 activations.

On Hopper-class GPUs the product runs in `torch._scaled_mm` (row-wise scales, bf16 output).
On CPU, and for tests, the same quantized operands are dequantized and multiplied in float32:
an emulation of what the FP8 GEMM computes, up to its accumulation order.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from hymt.engine.layers.linear import frozen_param, fused_output_sizes
from hymt.engine.quant.fp8_weights import dequantize_fp8_rows, quantize_fp8_rows, require_fp8


class Fp8Linear(nn.Module):
    """y = (q_x s_x) @ (q_w s_w).T (+ bias), q_x quantized per row of x at run time."""

    def __init__(self, in_features: int, out_features: int, scheme=None, *, bias: bool = False,
                 output_sizes: tuple[int, ...] | None = None, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.output_sizes = fused_output_sizes(out_features, output_sizes)
        self.weight = frozen_param(torch.zeros(out_features, in_features, device=device, dtype=require_fp8()))  # [N, K]
        self.weight_scale = frozen_param(torch.ones(out_features, device=device, dtype=torch.float32))  # [N]
        self.bias = frozen_param(torch.zeros(out_features, device=device, dtype=dtype)) if bias else None

    @torch.no_grad()
    def load_float_rows(self, start: int, w: torch.Tensor) -> None:
        """Quantize float rows w [rows, K] (per row) into rows [start, start + rows)."""
        q, scale = quantize_fp8_rows(w.to(self.weight.device))
        self.load_quantized_rows(start, q, scale)

    @torch.no_grad()
    def load_quantized_rows(self, start: int, q: torch.Tensor, scale: torch.Tensor) -> None:
        """Store e4m3 rows q [rows, K] with their scales ([rows], [rows, 1] or one per-tensor value)."""
        rows = q.shape[0]
        self.weight[start : start + rows].copy_(q)
        scale = scale.to(device=self.weight_scale.device, dtype=torch.float32).reshape(-1)
        self.weight_scale[start : start + rows].copy_(scale.expand(rows) if scale.numel() == 1 else scale)

    def dequantized_weight(self, dtype: torch.dtype) -> torch.Tensor:
        return dequantize_fp8_rows(self.weight.data, self.weight_scale.data, dtype)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        lead = x.shape[:-1]
        x2 = x.reshape(-1, self.in_features)  # [M, K]
        if x2.is_cuda:
            from hymt.engine.quant.scaled_mm import fp8_linear_cuda

            out = fp8_linear_cuda(x2, self.weight, self.weight_scale, self.bias)
        else:
            xq, xs = quantize_fp8_rows(x2)
            out = F.linear(dequantize_fp8_rows(xq, xs, torch.float32), self.dequantized_weight(torch.float32))
            out = out.to(x2.dtype)
            if self.bias is not None:
                out = out + self.bias
        return out.reshape(*lead, self.out_features)

    def extra_repr(self) -> str:
        return f"in={self.in_features}, out={self.output_sizes}, fp8 e4m3 per-channel, bias={self.bias is not None}"
