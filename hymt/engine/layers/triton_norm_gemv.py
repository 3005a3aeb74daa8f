"""Triton RMSNorm (+ residual add) fused into the projection that follows it, for 1-4 rows.

At batch 1 a decode step is bound by launches and weight reads: the RMSNorm and SwiGLU
kernels between the projections cost 2.5 µs each on an H100 while doing almost no work
(docs/reference/engine.md §3.6). Here the norm runs inside the projection, in one pass
over its input: every program reads its rows (a few KB, from L2), accumulates their sum of
squares beside the dot products with its slice of the weight, and scales the dot products
by the rows' 1/rms at the end. With `swiglu`, a program also streams the matching "up" rows
and writes silu(gate) * up, so the SwiGLU kernel and the gate/up output go too.

Rounding against the unfused path (layers/rmsnorm.py, layers/activation.py): the residual
sum is rounded to the model dtype as there, and gate and up are rounded like a GEMM output
before SwiGLU; the normalised input is not rounded to the model dtype before the dot
product (the scale comes after it), a difference within bf16 noise and none in float32.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from hymt.engine.layers.kernel_choice import next_pow2

#: Most rows (tokens) a call takes: every program holds all rows' partial sums.
MAX_ROWS = 4
#: Weight rows per program and the K chunk it streams per iteration: [BLOCK_N, BLOCK_K] bf16 tiles.
_BLOCK_N = 4
_BLOCK_K = 512


@triton.jit
def _rows(x_ptr, res_ptr, m, k, mask, stride_x, stride_r, HAS_RESIDUAL: tl.constexpr):
    """x (+ residual) for rows m, columns k -> [M_PAD, BLOCK_K] fp32, rounded to x's dtype."""
    x = tl.load(x_ptr + m[:, None] * stride_x + k[None, :], mask=mask, other=0.0).to(tl.float32)
    if HAS_RESIDUAL:
        r = tl.load(res_ptr + m[:, None] * stride_r + k[None, :], mask=mask, other=0.0).to(tl.float32)
        x = (x + r).to(x_ptr.dtype.element_ty).to(tl.float32)
    return x


@triton.jit
def _norm_gemv_kernel(
    x_ptr, res_ptr, norm_w_ptr, w_ptr, out_ptr, res_out_ptr,
    M, N, stride_x, stride_r, stride_w, stride_o, stride_ro, eps,
    K: tl.constexpr, HAS_RESIDUAL: tl.constexpr, SWIGLU: tl.constexpr, M_PAD: tl.constexpr,
    BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid = tl.program_id(0)
    m = tl.arange(0, M_PAD)
    m_ok = m < M
    n = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    n_ok = n < N
    dt = out_ptr.dtype.element_ty
    w_rows = n.to(tl.int64)[:, None] * stride_w
    up_rows = (n + N).to(tl.int64)[:, None] * stride_w  # with SWIGLU: the up rows, N rows below the gate rows
    sq = tl.zeros([M_PAD], tl.float32)
    acc = tl.zeros([M_PAD, BLOCK_N], tl.float32)
    acc_up = tl.zeros([M_PAD, BLOCK_N], tl.float32)
    # Unrolled (K is a constexpr), so the weight tiles' loads are all in flight at once.
    for k0 in tl.static_range(0, K, BLOCK_K):
        k = k0 + tl.arange(0, BLOCK_K)
        k_ok = k < K
        mk_ok = m_ok[:, None] & k_ok[None, :]
        h = _rows(x_ptr, res_ptr, m, k, mk_ok, stride_x, stride_r, HAS_RESIDUAL)
        if HAS_RESIDUAL:
            if pid == 0:  # the next residual, written once
                tl.store(res_out_ptr + m[:, None] * stride_ro + k[None, :], h.to(dt), mask=mk_ok)
        sq += tl.sum(h * h, axis=1)
        y = h * tl.load(norm_w_ptr + k, mask=k_ok, other=0.0).to(tl.float32)[None, :]
        wk_ok = n_ok[:, None] & k_ok[None, :]
        w = tl.load(w_ptr + w_rows + k[None, :], mask=wk_ok, other=0.0).to(tl.float32)
        acc += tl.sum(y[:, None, :] * w[None, :, :], axis=2)
        if SWIGLU:
            wu = tl.load(w_ptr + up_rows + k[None, :], mask=wk_ok, other=0.0).to(tl.float32)
            acc_up += tl.sum(y[:, None, :] * wu[None, :, :], axis=2)
    rstd = tl.rsqrt(sq / K + eps)[:, None]  # the norm's scale, applied after the dot product
    acc = acc * rstd
    if SWIGLU:
        gate = acc.to(dt).to(tl.float32)
        act = (gate / (1.0 + tl.exp(-gate))).to(dt).to(tl.float32)
        acc = act * (acc_up * rstd).to(dt).to(tl.float32)
    tl.store(out_ptr + m[:, None] * stride_o + n[None, :], acc.to(dt), mask=m_ok[:, None] & n_ok[None, :])


def norm_linear_triton(
    x: torch.Tensor, residual: torch.Tensor | None, norm_weight: torch.Tensor, eps: float, weight: torch.Tensor,
    *, swiglu: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    """RMSNorm(x + residual) @ weight.T for x [M, K], M <= MAX_ROWS.

    weight [N, K] (with `swiglu`: [2 I, K], gate rows then up rows). Returns (out [M, N], or
    silu(gate) * up [M, I] with `swiglu`; the new residual [M, K]: x + residual, or x itself
    when there is no residual).
    """
    rows, k = x.shape
    if not 1 <= rows <= MAX_ROWS:
        raise ValueError(f"norm_linear_triton takes 1 to {MAX_ROWS} rows, got {rows}")
    assert x.stride(-1) == 1 and weight.stride(-1) == 1 and weight.shape[1] == k
    n = weight.shape[0] // 2 if swiglu else weight.shape[0]
    out = torch.empty((rows, n), dtype=x.dtype, device=x.device)
    res_out = x if residual is None else torch.empty_like(x)
    res_in = x if residual is None else residual
    _norm_gemv_kernel[(triton.cdiv(n, _BLOCK_N),)](
        x, res_in, norm_weight, weight, out, res_out,
        rows, n, x.stride(0), res_in.stride(0), weight.stride(0), out.stride(0), res_out.stride(0), eps,
        K=k, HAS_RESIDUAL=residual is not None, SWIGLU=swiglu, M_PAD=next_pow2(rows),
        BLOCK_N=_BLOCK_N, BLOCK_K=_BLOCK_K, num_warps=4,
    )
    return out, res_out
