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
#: Weight rows per program.
_BLOCK_N = 4


def block_k(padded_rows: int) -> int:
    """The chunk of K a program streams per iteration, for `padded_rows` rows (1, 2 or 4).

    Each thread holds padded_rows x _BLOCK_N x chunk / 128 products until the loop ends. ptxas
    for sm_90: 78-96 registers at 1 row and 512; 72-168 at 2 and 4 rows and 256, no spills
    (512 spills at 4 rows); every weight load 16 bytes wide.
    """
    return 512 if padded_rows == 1 else 256


@triton.jit
def _norm_gemv_kernel(
    x_ptr, res_ptr, norm_w_ptr, w_ptr, out_ptr, res_out_ptr,
    M, N, stride_x, stride_r, stride_w, stride_o, stride_ro, eps,
    K: tl.constexpr, HAS_RESIDUAL: tl.constexpr, SWIGLU: tl.constexpr, M_PAD: tl.constexpr,
    BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    # Every tile is [rows, weight rows, K], the input rows loaded once per weight row (from L1),
    # so all share one register layout and nothing is shuffled through shared memory in the
    # loop; every sum over K waits until after it: one cross-thread reduction, not one a chunk.
    pid = tl.program_id(0)
    dt = out_ptr.dtype.element_ty
    m = tl.arange(0, M_PAD)[:, None, None]
    j = tl.arange(0, BLOCK_N)[None, :, None]
    n = pid * BLOCK_N + j
    spread = 0 * j  # [1, BLOCK_N, 1] zeros: spreads an input row (and its mask) over the weight rows
    w_rows = n.to(tl.int64) * stride_w
    up_rows = (n + N).to(tl.int64) * stride_w  # with SWIGLU: the up rows, N rows below the gate rows
    sq = tl.zeros([M_PAD, BLOCK_N, BLOCK_K], tl.float32)
    acc = tl.zeros([M_PAD, BLOCK_N, BLOCK_K], tl.float32)
    acc_up = tl.zeros([M_PAD, BLOCK_N, BLOCK_K], tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + tl.arange(0, BLOCK_K)[None, None, :]
        mk_ok = (m < M) & (k < K) & (spread == 0)
        h = tl.load(x_ptr + m * stride_x + k + spread, mask=mk_ok, other=0.0).to(tl.float32)
        if HAS_RESIDUAL:
            r = tl.load(res_ptr + m * stride_r + k + spread, mask=mk_ok, other=0.0).to(tl.float32)
            h = (h + r).to(dt).to(tl.float32)  # the residual sum, rounded as the unfused path does
            if pid == 0:  # the next residual, written once (by the first weight row's threads)
                tl.store(res_out_ptr + m * stride_ro + k + spread, h.to(dt), mask=mk_ok & (j == 0))
        sq += h * h
        y = h * tl.load(norm_w_ptr + k + spread, mask=(k < K) & (spread == 0), other=0.0).to(tl.float32)
        wk_ok = (n < N) & (k < K)
        acc += y * tl.load(w_ptr + w_rows + k, mask=wk_ok, other=0.0).to(tl.float32)
        if SWIGLU:
            acc_up += y * tl.load(w_ptr + up_rows + k, mask=wk_ok, other=0.0).to(tl.float32)
    rstd = tl.rsqrt(tl.sum(sq, axis=2) / K + eps)  # [M_PAD, BLOCK_N]: the norm's scale, after the dot product
    out = tl.sum(acc, axis=2) * rstd  # [M_PAD, BLOCK_N]
    if SWIGLU:
        gate = out.to(dt).to(tl.float32)
        act = (gate / (1.0 + tl.exp(-gate))).to(dt).to(tl.float32)
        out = act * (tl.sum(acc_up, axis=2) * rstd).to(dt).to(tl.float32)
    m2 = tl.arange(0, M_PAD)[:, None]
    n2 = pid * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
    tl.store(out_ptr + m2 * stride_o + n2, out.to(dt), mask=(m2 < M) & (n2 < N))


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
        BLOCK_N=_BLOCK_N, BLOCK_K=block_k(next_pow2(rows)), num_warps=4,
    )
    return out, res_out
