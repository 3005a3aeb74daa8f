"""Triton GEMV: y = x @ W.T for a few rows of x, reading W once at full bandwidth.

At one to four rows a projection is a read of its weight and nothing else. cuBLAS picks
split-K GEMM kernels there that, on an H100, read a 2048 x 2048 bf16 weight at about a
fifth of the card's bandwidth (docs/reference/engine.md §3.5). Here each program owns
BLOCK_N output columns and streams their weight rows in BLOCK_K slices, multiplying every
row of x against the same slice, so each weight byte is read once whatever the row count.
gemv_choice.py decides, per weight shape and row count, whether this or cuBLAS runs.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from hymt.engine.layers.kernel_choice import next_pow2

# Rows of x this kernel serves; past them the weight read is no longer the whole cost.
GEMV_MAX_ROWS = 4
_BLOCK_N = 4
_BLOCK_K = 512


@triton.jit
def _gemv_kernel(
    x_ptr, w_ptr, b_ptr, out_ptr, N, K, stride_xm, stride_wn, stride_om,
    M: tl.constexpr, M_PAD: tl.constexpr, HAS_BIAS: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    n = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    n_ok = n < N
    m = tl.arange(0, M_PAD)
    m_ok = m < M
    acc = tl.zeros([M_PAD, BLOCK_N], tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + tl.arange(0, BLOCK_K)
        k_ok = k < K
        w = tl.load(w_ptr + n.to(tl.int64)[:, None] * stride_wn + k[None, :],
                    mask=n_ok[:, None] & k_ok[None, :], other=0.0).to(tl.float32)  # [BLOCK_N, BLOCK_K]
        x = tl.load(x_ptr + m[:, None] * stride_xm + k[None, :],
                    mask=m_ok[:, None] & k_ok[None, :], other=0.0).to(tl.float32)  # [M_PAD, BLOCK_K]
        acc += tl.sum(x[:, None, :] * w[None, :, :], axis=2)
    if HAS_BIAS:
        acc += tl.load(b_ptr + n, mask=n_ok, other=0.0).to(tl.float32)[None, :]
    tl.store(out_ptr + m[:, None] * stride_om + n[None, :], acc.to(out_ptr.dtype.element_ty),
             mask=m_ok[:, None] & n_ok[None, :])


def gemv_triton(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """x [M, K] (M <= GEMV_MAX_ROWS), weight [N, K], bias [N] or None -> [M, N] in x's dtype."""
    m, k = x.shape
    n = weight.shape[0]
    if m > GEMV_MAX_ROWS:
        raise ValueError(f"gemv_triton serves at most {GEMV_MAX_ROWS} rows, got {m}")
    assert x.stride(-1) == 1 and weight.stride(-1) == 1
    out = torch.empty((m, n), dtype=x.dtype, device=x.device)
    _gemv_kernel[(triton.cdiv(n, _BLOCK_N),)](
        x, weight, bias if bias is not None else weight, out, n, k, x.stride(0), weight.stride(0), out.stride(0),
        M=m, M_PAD=next_pow2(m), HAS_BIAS=bias is not None, BLOCK_N=_BLOCK_N, BLOCK_K=_BLOCK_K, num_warps=4,
    )
    return out
