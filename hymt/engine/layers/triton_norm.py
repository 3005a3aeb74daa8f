"""Triton RMSNorm, optionally fused with the residual add that precedes it.

Rounds exactly where transformers does: the residual sum is rounded to the model dtype
before it is normalised, and the normalised value is rounded before the weight multiply.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from hymt.engine.layers.kernel_choice import next_pow2


@triton.jit
def _rmsnorm_kernel(
    x_ptr, res_ptr, w_ptr, out_ptr, res_out_ptr,
    stride_x, stride_r, stride_o, stride_ro,
    eps,
    N: tl.constexpr, BLOCK: tl.constexpr, HAS_RESIDUAL: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    if HAS_RESIDUAL:
        r = tl.load(res_ptr + row * stride_r + cols, mask=mask, other=0.0).to(tl.float32)
        h = (x + r).to(res_out_ptr.dtype.element_ty)
        tl.store(res_out_ptr + row * stride_ro + cols, h, mask=mask)
        x = h.to(tl.float32)
    var = tl.sum(x * x, axis=0) / N
    y = (x * tl.rsqrt(var + eps)).to(out_ptr.dtype.element_ty).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + row * stride_o + cols, (w * y).to(out_ptr.dtype.element_ty), mask=mask)


def rmsnorm_triton(
    x: torch.Tensor, weight: torch.Tensor, eps: float, residual: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """x [T, N] (+ residual [T, N]) -> (normed [T, N], new residual [T, N] or None)."""
    assert x.stride(-1) == 1, "rows must be contiguous"
    n = x.shape[-1]
    out = torch.empty_like(x)
    block = next_pow2(n)
    warps = 8 if block >= 4096 else 4
    if residual is None:
        _rmsnorm_kernel[(x.shape[0],)](
            x, x, weight, out, out, x.stride(0), 0, out.stride(0), 0, eps,
            N=n, BLOCK=block, HAS_RESIDUAL=False, num_warps=warps,
        )
        return out, None
    res_out = torch.empty_like(x)
    _rmsnorm_kernel[(x.shape[0],)](
        x, residual, weight, out, res_out, x.stride(0), residual.stride(0), out.stride(0),
        res_out.stride(0), eps, N=n, BLOCK=block, HAS_RESIDUAL=True, num_warps=warps,
    )
    return out, res_out
