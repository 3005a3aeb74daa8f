"""Triton kernels reading int4 weights in tinygemm's layout, for the rows tinygemm is slow at.

torch's tinygemm kernel (tinygemm.py) wins at a few rows and falls far behind from ~16. With
its layout as the only copy of the weight, more rows are served from the same words:
  TINYGEMM_MAX_M < M <= TG_FUSED_MAX_M: fused dequantize + tl.dot, for weights of at least
      FUSED_MIN_WEIGHTS;
  otherwise: dequantize the weight once (in k order), then the vendor GEMM.
Both read each row's ROW_WORDS words of a tile in one contiguous load, unpack them in slot
order and put them in k order in registers (SlotPermutation: a reshape and an axis
permutation of the tile), so x is read as it is. Read as bytes, a row's words are our own
int4 packing (int_weights.py) of its weights in slot order, so the kernels are those of
triton_int_matmul.py with another addressing, the register permutation, tinygemm's
(scale, offset) pairs and the unpacking below.

Tried on the H200 and removed (2026-12-03/04, in the git history of docs/BENCHMARKS.md):
dequantizers gathering each weight by a
probed (word, shift) map (0.66x bf16 throughput on the 1.8B) or storing each slot at its k
(scattered stores, 0.31x); a fused kernel gathering x in slot order inside the loop; x
permuted into slot order by an index_select before each call (a launch and ~28 us of host
time per projection, where prefill runs eagerly); and first versions whose weight loads did
not vectorize: Triton cannot see that a row's bytes start 16-byte aligned through the tile
arithmetic, so it issued 1-byte loads, 2-3x slower than our int4's fused kernel at 16-64
rows. The multiple_of / max_contiguous hints in _load_tile are what make the loads 16-byte
(checked in the sm_90 PTX: the same cp.async as triton_int_matmul's).

The 4-bit values become bf16 without an int-to-float conversion (int4_minus): (q - 8) *
scale + offset is two packed bf16x2 ops per two weights. H200 probe run 11: 5-15 % faster at
16-128 rows on every projection, the same GEMM error (the weights were rounded to bf16 for
the dot before as well).
"""
from __future__ import annotations

import functools

import torch
import triton
import triton.language as tl

from hymt.engine.quant.tinygemm import (
    ROW_WORDS,
    TILE_K,
    TILE_N,
    TILE_WORDS,
    SlotPermutation,
    TinygemmWeights,
    tinygemm_linear,
)
from hymt.engine.quant.triton_int_matmul import fused_block_m, int4_minus

#: Most rows served by torch's tinygemm. H200 sweep of tools/gpu_check_quant.py: at 8 rows it
#: is still ahead of the fused kernel on our own layout for qkv/o/down (1.8B qkv 0.0061 vs
#: 0.0079 ms), at 16 behind on qkv and gate_up.
TINYGEMM_MAX_M = 8
#: Most rows served by the fused kernel. H200 probe run 11 (bf16 unpacking): at 128 rows it
#: beat dequantize + cuBLAS on every projection of at least FUSED_MIN_WEIGHTS (7B gate_up
#: 0.126 against 0.152 ms, 7B o 0.023 against 0.025); at 256 (runs 10 and 12) it lost on all.
TG_FUSED_MAX_M = 128
#: Smallest weight (N * K) the fused kernel serves. H200, tools/gpu_check_quant.py run 9, 16-64
#: rows: dequantize + cuBLAS beat the fused kernel on the 1.8B's qkv, o and down (up to 12.6M
#: weights; down 0.017 against 0.031-0.034 ms: 2048 outputs are 64 programs of 32 on 132
#: SMs), tied on the 7B o (16.8M) and lost on every larger one (7B gate_up 0.145 against 0.093).
FUSED_MIN_WEIGHTS = 4096 * 4096
#: Output rows per program: our int_mm's 32, or 64 for outputs of at least WIDE_N (H200, 7B
#: gate_up N = 28672, 16 / 64 / 128 rows: 0.090 / 0.097 / 0.166 ms with 32 in probe run 11,
#: 0.071 / 0.082 / 0.127 with 64 in run 12), except in M-blocks of 32 rows, where 64 lost
#: (0.114 against 0.094 ms).
BLOCK_N, WIDE_BLOCK_N, WIDE_N = 32, 64, 16384


@triton.jit
def _load_tile(words_ptr, row_byte, n_mask, k0, saz_ptr, rn, stride_sg,
               GROUP: tl.constexpr, TILE_K: tl.constexpr, TILE_BYTES: tl.constexpr, BLOCK_N: tl.constexpr,
               SLOT_SHAPE: tl.constexpr, K_ORDER: tl.constexpr):
    """Rows rn, columns [k0, k0 + TILE_K) (one tile), dequantized in k order -> [BLOCK_N, TILE_K]
    in the dtype of the scales (bf16 on the GPU).

    Byte j of a row's words holds slot 2j in its low nibble and 2j + 1 in the high one
    (nibble i of a little-endian word is slot 8 * word + i): _load_q's unpacking. SLOT_SHAPE
    is SlotPermutation.slot_shape; K_ORDER its k_axes counted from 1, behind the row axis
    (a tuple constexpr is only unwrapped when concatenated, hence the tuple arithmetic).
    """
    w8_ptr = words_ptr.to(tl.pointer_type(tl.uint8))
    row = tl.multiple_of(row_byte + (k0 // TILE_K) * TILE_BYTES, 16)  # [BN]: the hints let the loads vectorize
    rb = tl.max_contiguous(tl.multiple_of(tl.arange(0, TILE_K // 2), 16), TILE_K // 2)
    packed = tl.load(w8_ptr + row[:, None] + rb[None, :], mask=n_mask[:, None], other=0)
    q = tl.reshape(tl.join(packed & 0xF, (packed >> 4) & 0xF), (BLOCK_N,) + SLOT_SHAPE)  # slot 2j low, 2j + 1 high
    q = tl.reshape(tl.permute(q, (0,) + K_ORDER), (BLOCK_N, TILE_K))  # [BN, TILE_K] in k order
    # q - 8, exactly, in the scales' dtype: bf16 on the GPU; float32 in the CPU tests (Triton's
    # interpreter has no bf16)
    q = int4_minus(q, 8.0, saz_ptr.dtype.element_ty)
    if GROUP >= TILE_K:  # the tile lies in one group: a (scale, offset) per row
        sz = saz_ptr + (k0 // GROUP) * stride_sg + rn * 2  # [groups, N, 2]
        scale = tl.load(sz, mask=n_mask, other=0)[:, None]  # the scales' dtype, as q
        offset = tl.load(sz + 1, mask=n_mask, other=0)[:, None]
    else:
        group = (k0 + tl.arange(0, TILE_K)) // GROUP  # [TILE_K]
        sz = saz_ptr + group[None, :] * stride_sg + rn[:, None] * 2
        scale = tl.load(sz, mask=n_mask[:, None], other=0)
        offset = tl.load(sz + 1, mask=n_mask[:, None], other=0)
    return q * scale + offset  # one rounding, in the fma


@triton.jit
def _row_byte(rn, K_TILES, TILE_N: tl.constexpr, TILE_BYTES: tl.constexpr, ROW_BYTES: tl.constexpr):
    """[BN] byte offset of each row's words in k tile 0 (tiles in (n tile, k tile) order)."""
    return (rn // TILE_N) * K_TILES * TILE_BYTES + (rn % TILE_N) * ROW_BYTES


@triton.jit
def _tg_mm_kernel(
    x_ptr, words_ptr, saz_ptr, out_ptr, M, N, K, stride_xm, stride_om, stride_sg,
    GROUP: tl.constexpr, TILE_N: tl.constexpr, TILE_K: tl.constexpr, TILE_BYTES: tl.constexpr,
    ROW_BYTES: tl.constexpr, SLOT_SHAPE: tl.constexpr, K_ORDER: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    rm = tl.program_id(1) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    m_mask = rm < M
    n_mask = rn < N
    row_byte = _row_byte(rn, K // TILE_K, TILE_N, TILE_BYTES, ROW_BYTES)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, TILE_K):
        rk = k0 + tl.arange(0, TILE_K)
        a = tl.load(x_ptr + rm[:, None] * stride_xm + rk[None, :], mask=m_mask[:, None], other=0.0)  # [BM, TK]
        w = _load_tile(words_ptr, row_byte, n_mask, k0, saz_ptr, rn, stride_sg,
                       GROUP, TILE_K, TILE_BYTES, BLOCK_N, SLOT_SHAPE, K_ORDER)
        acc = tl.dot(a, tl.trans(w.to(a.dtype)), acc)
    out = out_ptr + rm[:, None] * stride_om + rn[None, :]
    tl.store(out, acc.to(out_ptr.dtype.element_ty), mask=m_mask[:, None] & n_mask[None, :])


@triton.jit
def _tg_dequant_kernel(
    words_ptr, saz_ptr, out_ptr, N, K, stride_o, stride_sg,
    GROUP: tl.constexpr, TILE_N: tl.constexpr, TILE_K: tl.constexpr, TILE_BYTES: tl.constexpr,
    ROW_BYTES: tl.constexpr, SLOT_SHAPE: tl.constexpr, K_ORDER: tl.constexpr, BLOCK_N: tl.constexpr,
):
    rn = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    k0 = tl.program_id(1) * TILE_K
    n_mask = rn < N
    row_byte = _row_byte(rn, K // TILE_K, TILE_N, TILE_BYTES, ROW_BYTES)
    w = _load_tile(words_ptr, row_byte, n_mask, k0, saz_ptr, rn, stride_sg,
                   GROUP, TILE_K, TILE_BYTES, BLOCK_N, SLOT_SHAPE, K_ORDER)
    out = out_ptr + rn[:, None] * stride_o + k0 + tl.arange(0, TILE_K)[None, :]
    tl.store(out, w.to(out_ptr.dtype.element_ty), mask=n_mask[:, None])


@functools.cache
def _tile_constants(group_size: int, perm: SlotPermutation) -> dict:
    """The kernels' layout constexprs, built once: a dict built per call cost ~15 us of the
    ~40 us eager launch (probe run 11)."""
    return dict(GROUP=group_size, TILE_N=TILE_N, TILE_K=TILE_K, TILE_BYTES=TILE_WORDS * 4, ROW_BYTES=ROW_WORDS * 4,
                SLOT_SHAPE=perm.slot_shape, K_ORDER=tuple(a + 1 for a in perm.k_axes))


def tinygemm_mm(x: torch.Tensor, w: TinygemmWeights, perm: SlotPermutation, out_features: int) -> torch.Tensor:
    """x [M, K] bf16 contiguous -> x @ W.T [M, N], fused; M-blocks of 16, 32 or 64 rows."""
    m, k = x.shape
    block_m = fused_block_m(m)
    block_n = WIDE_BLOCK_N if out_features >= WIDE_N and block_m != 32 else BLOCK_N
    out = x.new_empty((m, out_features))
    saz = w.scales_and_zeros  # [groups, N, 2]
    grid = (triton.cdiv(out_features, block_n), triton.cdiv(m, block_m))
    _tg_mm_kernel[grid](x, w.packed, saz, out, m, out_features, k, x.stride(0), out.stride(0), saz.stride(0),
                        BLOCK_M=block_m, BLOCK_N=block_n, num_warps=4, num_stages=3,
                        **_tile_constants(w.group_size, perm))
    return out


def tinygemm_dequantize(w: TinygemmWeights, perm: SlotPermutation, out_features: int,
                        dtype: torch.dtype) -> torch.Tensor:
    """The whole weight [N, K] in `dtype` (its values are bf16's), in k order."""
    saz = w.scales_and_zeros  # [groups, N, 2]
    in_features = saz.shape[0] * w.group_size
    out = torch.empty((out_features, in_features), device=w.packed.device, dtype=dtype)
    grid = (triton.cdiv(out_features, BLOCK_N), in_features // TILE_K)
    _tg_dequant_kernel[grid](w.packed, saz, out, out_features, in_features, out.stride(0), saz.stride(0),
                             BLOCK_N=BLOCK_N, **_tile_constants(w.group_size, perm))
    return out


def tinygemm_layer_linear(x: torch.Tensor, w: TinygemmWeights, perm: SlotPermutation,
                          out_features: int) -> torch.Tensor:
    """x [M, K] contiguous -> x @ W.T [M, N], the kernel picked by M (module docstring)."""
    m = x.shape[0]
    if m <= TINYGEMM_MAX_M:
        return tinygemm_linear(x, w)
    if m <= TG_FUSED_MAX_M and out_features * x.shape[1] >= FUSED_MIN_WEIGHTS:
        return tinygemm_mm(x, w, perm, out_features)
    return torch.nn.functional.linear(x, tinygemm_dequantize(w, perm, out_features, x.dtype))
