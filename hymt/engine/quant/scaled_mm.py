"""The CUDA path of Fp8Linear: per-token e4m3 activations (one Triton kernel) + torch._scaled_mm."""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from hymt.engine.quant.fp8_weights import FP8_MAX, require_fp8

_BLOCK = 1024
_TINY = 1e-12
# Whether _scaled_mm takes any row count; probed once (some builds want M % 16 == 0).
_ANY_M: bool | None = None


@triton.jit
def _per_token_fp8_kernel(x_ptr, q_ptr, s_ptr, K, stride_x, stride_q, FP8_MAX: tl.constexpr, TINY: tl.constexpr,
                          BLOCK: tl.constexpr):
    row = tl.program_id(0)
    amax = tl.zeros([BLOCK], dtype=tl.float32)
    for k0 in range(0, K, BLOCK):
        rk = k0 + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride_x + rk, mask=rk < K, other=0.0).to(tl.float32)
        amax = tl.maximum(amax, tl.abs(x))
    scale = tl.maximum(tl.max(amax, axis=0) / FP8_MAX, TINY)
    for k0 in range(0, K, BLOCK):
        rk = k0 + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride_x + rk, mask=rk < K, other=0.0).to(tl.float32)
        q = tl.clamp(x / scale, -FP8_MAX, FP8_MAX)
        tl.store(q_ptr + row * stride_q + rk, q.to(q_ptr.dtype.element_ty), mask=rk < K)
    tl.store(s_ptr + row, scale)


def quantize_per_token(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """x [M, K] -> (e4m3 [M, K], float32 scales [M, 1]) in one kernel."""
    m, k = x.shape
    q = torch.empty((m, k), device=x.device, dtype=require_fp8())
    scale = torch.empty((m, 1), device=x.device, dtype=torch.float32)
    _per_token_fp8_kernel[(m,)](x, q, scale, k, x.stride(0), q.stride(0), FP8_MAX=FP8_MAX, TINY=_TINY, BLOCK=_BLOCK)
    return q, scale


def _scaled_mm(xq, xs, weight, weight_scale, out_dtype):
    return torch._scaled_mm(xq, weight.t(), scale_a=xs, scale_b=weight_scale.view(1, -1), out_dtype=out_dtype)


def _any_m_supported(weight, weight_scale, out_dtype) -> bool:
    global _ANY_M
    if _ANY_M is None:
        probe = torch.zeros((1, weight.shape[1]), device=weight.device, dtype=weight.dtype)
        try:
            _scaled_mm(probe, torch.ones((1, 1), device=weight.device), weight, weight_scale, out_dtype)
            _ANY_M = True
        except RuntimeError:
            _ANY_M = False
    return _ANY_M


def fp8_linear_cuda(x, weight, weight_scale, bias) -> torch.Tensor:
    """x [M, K] model dtype, weight e4m3 [N, K], weight_scale [N] -> [M, N] in x.dtype."""
    xq, xs = quantize_per_token(x.contiguous())
    m = x.shape[0]
    pad = 0 if m % 16 == 0 or _any_m_supported(weight, weight_scale, x.dtype) else 16 - m % 16
    if pad:
        xq = torch.cat([xq, xq.new_zeros((pad, xq.shape[1]))])
        xs = torch.cat([xs, xs.new_ones((pad, 1))])
    out = _scaled_mm(xq, xs, weight, weight_scale, x.dtype)
    if pad:
        out = out[:m]
    return out if bias is None else out + bias
