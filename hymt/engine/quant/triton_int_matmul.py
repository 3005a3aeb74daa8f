"""Triton kernels for group-wise int8 / int4 weights (layout in int_weights.py).

Three kernels, picked by the number of rows M of the activations:
  M == 1:       GEMV. Weight-read bound: each program streams a [BLOCK_N, group] tile per
                step and reduces it against x; K is split across programs (fp32 atomics)
                when N alone gives too few programs to keep the memory system busy.
  M <= 64:      fused dequantize + tl.dot, so weights are read once at their packed size.
  M > 64:       dequantize the weight to the model dtype once, then the vendor GEMM: the
                dequantizer streams at 3-4 TB/s, and from ~64 rows cuBLAS on the result
                beats the fused kernel's tiles.
Every kernel needs group_size % BLOCK_K == 0 so a K tile lies inside one scale group.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

#: Largest M served by the fused dequantize + dot kernel. H200, tools/gpu_check_quant.py
#: (run 1 of 2026-12-04; its output, docs/bench-results/2026-12-04/run1_gpu_check_quant.txt, is
#: in the git history): at 128 and 256 rows dequantize +
#: cuBLAS won on seven of the eight 1.8B/7B projections (1.8B down at 128 rows: 0.020 against
#: 0.097 ms), at 64 the two split; the limit was 256.
FUSED_MAX_M = 64
#: Programs the GEMV aims for (a few per SM on an H200's 132 SMs).
_GEMV_TARGET_PROGRAMS = 512


@triton.jit
def int4_minus(q, sub, DTYPE: tl.constexpr):
    """4-bit values q (0..15, an integer tensor) minus `sub` (a number, or integer-valued
    floats such as zero points, 0..15), exactly, in DTYPE: bf16, fp16 or float32.

    No int-to-float conversion: q or'ed into the low mantissa bits of a power of two B is
    the float B + q (bf16 128, fp16 1024, float32 2^23), and B + q - (B + sub) is exact.
    The conversion (I2F, one per weight, on the SM's slow conversion pipe) is what bounded
    the fused kernels (H200; git history of docs/BENCHMARKS.md): on tinygemm's words 5-15 % faster at 16-128
    rows (run 11); on ours 8-30 % at 16-32 rows, within +-10 % at 64 (run 13).
    """
    if DTYPE == tl.bfloat16:
        return (q.to(tl.uint16) | 0x4300).to(tl.bfloat16, bitcast=True) - (sub + 128.0)
    elif DTYPE == tl.float16:
        return (q.to(tl.uint16) | 0x6400).to(tl.float16, bitcast=True) - (sub + 1024.0)
    else:
        return (q.to(tl.uint32) | 0x4B000000).to(tl.float32, bitcast=True) - (sub + 8388608.0)


@triton.jit
def _load_q(qw_ptr, rn, n_mask, k0, stride_qw, BITS: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """Integer weights of rows rn, columns [k0, k0 + BLOCK_K) -> [BLOCK_N, BLOCK_K]: uint8 0..15
    (int4, unpacked) or int8."""
    if BITS == 4:
        rkp = k0 // 2 + tl.arange(0, BLOCK_K // 2)
        packed = tl.load(qw_ptr + rn[:, None] * stride_qw + rkp[None, :], mask=n_mask[:, None], other=0)
        return tl.reshape(tl.join(packed & 0xF, (packed >> 4) & 0xF), (BLOCK_N, BLOCK_K))  # k = 2j low, 2j + 1 high
    rk = k0 + tl.arange(0, BLOCK_K)
    return tl.load(qw_ptr + rn[:, None] * stride_qw + rk[None, :], mask=n_mask[:, None], other=0)


@triton.jit
def _dequant_q(q, s_ptr, z_ptr, rn, n_mask, g, stride_s, BITS: tl.constexpr, HAS_ZERO: tl.constexpr):
    """_load_q's q of group g -> (q - zero) * scale [BLOCK_N, BLOCK_K] in the scales' dtype
    (int4), or float32 (int8)."""
    scale = tl.load(s_ptr + rn * stride_s + g, mask=n_mask, other=0)[:, None]
    if HAS_ZERO:
        zero = tl.load(z_ptr + rn * stride_s + g, mask=n_mask, other=0)[:, None]
    else:
        zero = 0.0
    if BITS == 4:
        return int4_minus(q, zero, s_ptr.dtype.element_ty) * scale  # one rounding, as in float32 then a cast
    else:
        return (q.to(tl.float32) - zero) * scale.to(tl.float32)


@triton.jit
def _int_gemv_kernel(
    x_ptr, qw_ptr, s_ptr, z_ptr, out_ptr, N, stride_qw, stride_s,
    BITS: tl.constexpr, HAS_ZERO: tl.constexpr, GROUP: tl.constexpr,
    BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, K_PER_SPLIT: tl.constexpr, ATOMIC: tl.constexpr,
):
    pid_n = tl.program_id(0)
    k_begin = tl.program_id(1) * K_PER_SPLIT
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    n_mask = rn < N
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for kk in range(0, K_PER_SPLIT, BLOCK_K):
        k0 = k_begin + kk
        x = tl.load(x_ptr + k0 + tl.arange(0, BLOCK_K)).to(tl.float32)  # [BLOCK_K]
        q = _load_q(qw_ptr, rn, n_mask, k0, stride_qw, BITS, BLOCK_N, BLOCK_K)
        # The conversion stays here: int4_minus's float32 form made the 7B gate_up GEMV slower
        # (H200 run 13: 0.049 -> 0.057 ms); the GEMV is bound by its weight reads.
        q = q.to(tl.float32)  # [BN, BK]
        g = k0 // GROUP
        scale = tl.load(s_ptr + rn * stride_s + g, mask=n_mask, other=0).to(tl.float32)
        dot = tl.sum(q * x[None, :], axis=1)
        if HAS_ZERO:
            zero = tl.load(z_ptr + rn * stride_s + g, mask=n_mask, other=0).to(tl.float32)
            dot -= zero * tl.sum(x, axis=0)  # sum((q - z) x) = sum(q x) - z sum(x)
        acc += scale * dot
    if ATOMIC:
        tl.atomic_add(out_ptr + rn, acc, mask=n_mask)
    else:
        tl.store(out_ptr + rn, acc.to(out_ptr.dtype.element_ty), mask=n_mask)


@triton.jit
def _int_mm_kernel(
    x_ptr, qw_ptr, s_ptr, z_ptr, out_ptr, M, N, K, stride_xm, stride_qw, stride_s, stride_om,
    BITS: tl.constexpr, HAS_ZERO: tl.constexpr, GROUP: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_n = tl.program_id(0)
    pid_m = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    m_mask = rm < M
    n_mask = rn < N
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(x_ptr + rm[:, None] * stride_xm + rk[None, :], mask=m_mask[:, None], other=0.0)  # [BM, BK]
        q = _load_q(qw_ptr, rn, n_mask, k0, stride_qw, BITS, BLOCK_N, BLOCK_K)  # [BN, BK]
        w = _dequant_q(q, s_ptr, z_ptr, rn, n_mask, k0 // GROUP, stride_s, BITS, HAS_ZERO).to(a.dtype)
        acc = tl.dot(a, tl.trans(w), acc)
    out = out_ptr + rm[:, None] * stride_om + rn[None, :]
    tl.store(out, acc.to(out_ptr.dtype.element_ty), mask=m_mask[:, None] & n_mask[None, :])


@triton.jit
def _int_dequant_kernel(
    qw_ptr, s_ptr, z_ptr, out_ptr, N, stride_qw, stride_s, stride_o,
    BITS: tl.constexpr, HAS_ZERO: tl.constexpr, GROUP: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    rn = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    k0 = tl.program_id(1) * BLOCK_K
    n_mask = rn < N
    q = _load_q(qw_ptr, rn, n_mask, k0, stride_qw, BITS, BLOCK_N, BLOCK_K)
    w = _dequant_q(q, s_ptr, z_ptr, rn, n_mask, k0 // GROUP, stride_s, BITS, HAS_ZERO)
    rk = k0 + tl.arange(0, BLOCK_K)
    tl.store(out_ptr + rn[:, None] * stride_o + rk[None, :], w.to(out_ptr.dtype.element_ty), mask=n_mask[:, None])


def fused_block_m(m: int) -> int:
    """Rows per program of the fused kernels (ours and tinygemm_kernels'): 16, 32 or 64."""
    return 16 if m <= 16 else (32 if m <= 32 else 64)


def _block_k(group_size: int) -> int:
    return min(group_size, 128)


def gemv_split(n: int, k: int, block_n: int, block_k: int) -> int:
    """How many K splits give the GEMV about _GEMV_TARGET_PROGRAMS programs (a divisor of K's tiles)."""
    tiles = k // block_k
    want = max(1, _GEMV_TARGET_PROGRAMS // triton.cdiv(n, block_n))
    split = 1
    for s in range(1, min(want, tiles) + 1):
        if tiles % s == 0:
            split = s
    return split


def int_gemv(x, qweight, scales, zeros, bits: int, group_size: int, *, block_n: int = 32, num_warps: int = 4,
             num_stages: int = 4) -> torch.Tensor:
    """x [1, K] -> [1, N]. The launch knobs are exposed for tools/gpu_check_quant.py's sweep."""
    n = scales.shape[0]
    k = x.shape[1]
    block_k = _block_k(group_size)
    split = gemv_split(n, k, block_n, block_k)
    atomic = split > 1
    out = torch.zeros((1, n), device=x.device, dtype=torch.float32) if atomic else x.new_empty((1, n))
    grid = (triton.cdiv(n, block_n), split)
    _int_gemv_kernel[grid](
        x, qweight, scales, zeros if zeros is not None else scales, out, n, qweight.stride(0), scales.stride(0),
        BITS=bits, HAS_ZERO=zeros is not None, GROUP=group_size, BLOCK_N=block_n, BLOCK_K=block_k,
        K_PER_SPLIT=k // split, ATOMIC=atomic, num_warps=num_warps, num_stages=num_stages,
    )
    return out.to(x.dtype) if atomic else out


def int_mm(x, qweight, scales, zeros, bits: int, group_size: int, *, block_n: int | None = None,
           block_k: int | None = None, num_warps: int = 4, num_stages: int = 3) -> torch.Tensor:
    """x [M, K] (M <= FUSED_MAX_M) -> [M, N] with the fused dequantize + dot kernel."""
    m, k = x.shape
    n = scales.shape[0]
    block_m = fused_block_m(m)
    # 32 x 128 tiles: the fastest in the H200 sweep of tools/gpu_check_quant.py (2026-12-03)
    # for every 1.8B and 7B projection but one; int4 batch-1 TTFT 31.8 -> 23.6 ms.
    block_n = block_n or 32
    block_k = block_k or _block_k(group_size)
    out = x.new_empty((m, n))
    grid = (triton.cdiv(n, block_n), triton.cdiv(m, block_m))
    _int_mm_kernel[grid](
        x, qweight, scales, zeros if zeros is not None else scales, out, m, n, k,
        x.stride(0), qweight.stride(0), scales.stride(0), out.stride(0),
        BITS=bits, HAS_ZERO=zeros is not None, GROUP=group_size,
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, num_warps=num_warps, num_stages=num_stages,
    )
    return out


def int_dequantize(qweight, scales, zeros, bits: int, group_size: int, in_features: int, dtype) -> torch.Tensor:
    """The whole weight [N, K] in `dtype`."""
    n = scales.shape[0]
    block_n, block_k = 32, _block_k(group_size)
    out = torch.empty((n, in_features), device=scales.device, dtype=dtype)
    grid = (triton.cdiv(n, block_n), in_features // block_k)
    _int_dequant_kernel[grid](
        qweight, scales, zeros if zeros is not None else scales, out, n,
        qweight.stride(0), scales.stride(0), out.stride(0),
        BITS=bits, HAS_ZERO=zeros is not None, GROUP=group_size, BLOCK_N=block_n, BLOCK_K=block_k,
    )
    return out


def int_linear_triton(x, qweight, scales, zeros, bits: int, group_size: int) -> torch.Tensor:
    """x [M, K] contiguous -> x @ W.T [M, N], the kernel picked by M (module docstring)."""
    m = x.shape[0]
    if m == 1:
        return int_gemv(x, qweight, scales, zeros, bits, group_size)
    if m <= FUSED_MAX_M:
        return int_mm(x, qweight, scales, zeros, bits, group_size)
    w = int_dequantize(qweight, scales, zeros, bits, group_size, x.shape[1], x.dtype)
    return torch.nn.functional.linear(x, w)
