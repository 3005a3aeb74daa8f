"""Triton kernels reading int4 weights in tinygemm's layout, for the rows tinygemm is slow at.

torch's tinygemm kernel (tinygemm.py) wins at a few rows and falls far behind from ~16. With
its layout as the only copy of the weight, more rows are served here, on the same words:
  TINYGEMM_MAX_M < M <= FUSED_MAX_M: fused dequantize + tl.dot over one tile (128 k) a step;
  M > FUSED_MAX_M: dequantize the weight once, then the vendor GEMM (compute-bound sizes).
Inside a tile each row's weights sit in a fixed order of slots (probe_row_order), so the
kernels read a row's ROW_WORDS words in one contiguous load, unpack them in slot order and
permute the other operand instead: x is gathered in slot order for the dot, and the
dequantized values are stored at their k. Needs group_size >= TILE_K (a tile in one group).
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from hymt.engine.quant.tinygemm import ROW_WORDS, TILE_K, TILE_N, TILE_WORDS, TinygemmWeights, tinygemm_linear

#: Most rows served by torch's tinygemm. H200 sweep of tools/gpu_check_quant.py: at 8 rows
#: it is still ahead of the fused kernel on our old layout for qkv/o/down (1.8B qkv 0.0061
#: vs 0.0079 ms), at 16 behind on qkv and gate_up (0.0100 vs 0.0078, 0.031 vs 0.014).
TINYGEMM_MAX_M = 8
#: Most rows served by the fused kernel; above, dequantize + cuBLAS.
FUSED_MAX_M = 256


@triton.jit
def _load_tile(w_ptr, row_word, n_mask, k_tile, saz_ptr, rn, stride_sg, GROUP: tl.constexpr, TILE_K: tl.constexpr,
               TILE_WORDS: tl.constexpr, ROW_WORDS: tl.constexpr, BLOCK_N: tl.constexpr):
    """Rows rn of k tile `k_tile`, dequantized, in slot order -> float32 [BLOCK_N, TILE_K]."""
    first = row_word + k_tile * TILE_WORDS  # [BN] the row's first word in this tile
    words = tl.load(w_ptr + first[:, None] + tl.arange(0, ROW_WORDS)[None, :], mask=n_mask[:, None], other=0)
    q = (words[:, :, None] >> (tl.arange(0, 8) * 4)[None, None, :]) & 0xF  # [BN, ROW_WORDS, 8]
    q = tl.reshape(q, (BLOCK_N, TILE_K)).to(tl.float32)  # slot = word * 8 + nibble
    sz = saz_ptr + (k_tile * TILE_K // GROUP) * stride_sg + rn * 2  # [groups, N, 2]: (scale, offset)
    scale = tl.load(sz, mask=n_mask, other=0).to(tl.float32)
    offset = tl.load(sz + 1, mask=n_mask, other=0).to(tl.float32)
    return (q - 8.0) * scale[:, None] + offset[:, None]


@triton.jit
def _tg_mm_kernel(
    x_ptr, w_ptr, order_ptr, saz_ptr, out_ptr, M, N, K_TILES, stride_xm, stride_om, stride_sg,
    GROUP: tl.constexpr, TILE_N: tl.constexpr, TILE_K: tl.constexpr, TILE_WORDS: tl.constexpr,
    ROW_WORDS: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    rm = tl.program_id(1) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    m_mask = rm < M
    n_mask = rn < N
    order = tl.load(order_ptr + tl.arange(0, TILE_K))  # [TILE_K] k of each slot
    row_word = (rn // TILE_N) * K_TILES * TILE_WORDS + (rn % TILE_N) * ROW_WORDS  # [BN] in k tile 0
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k_tile in range(0, K_TILES):
        a = tl.load(x_ptr + rm[:, None] * stride_xm + k_tile * TILE_K + order[None, :], mask=m_mask[:, None],
                    other=0.0)  # [BM, TILE_K] in slot order
        w = _load_tile(w_ptr, row_word, n_mask, k_tile, saz_ptr, rn, stride_sg,
                       GROUP, TILE_K, TILE_WORDS, ROW_WORDS, BLOCK_N)
        acc = tl.dot(a, tl.trans(w.to(a.dtype)), acc)
    out = out_ptr + rm[:, None] * stride_om + rn[None, :]
    tl.store(out, acc.to(out_ptr.dtype.element_ty), mask=m_mask[:, None] & n_mask[None, :])


@triton.jit
def _tg_dequant_kernel(
    w_ptr, order_ptr, saz_ptr, out_ptr, N, K_TILES, stride_o, stride_sg,
    GROUP: tl.constexpr, TILE_N: tl.constexpr, TILE_K: tl.constexpr, TILE_WORDS: tl.constexpr,
    ROW_WORDS: tl.constexpr, BLOCK_N: tl.constexpr,
):
    rn = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    k_tile = tl.program_id(1)
    n_mask = rn < N
    order = tl.load(order_ptr + tl.arange(0, TILE_K))
    row_word = (rn // TILE_N) * K_TILES * TILE_WORDS + (rn % TILE_N) * ROW_WORDS
    w = _load_tile(w_ptr, row_word, n_mask, k_tile, saz_ptr, rn, stride_sg, GROUP, TILE_K, TILE_WORDS, ROW_WORDS,
                   BLOCK_N)
    out = out_ptr + rn[:, None] * stride_o + k_tile * TILE_K + order[None, :]  # each slot to its k
    tl.store(out, w.to(out_ptr.dtype.element_ty), mask=n_mask[:, None])


def _consts(w: TinygemmWeights) -> dict:
    return dict(GROUP=w.group_size, TILE_N=TILE_N, TILE_K=TILE_K, TILE_WORDS=TILE_WORDS, ROW_WORDS=ROW_WORDS)


def tg_mm(x: torch.Tensor, w: TinygemmWeights, order: torch.Tensor, out_features: int) -> torch.Tensor:
    """x [M, K] contiguous -> x @ W.T [M, N] with the fused kernel."""
    m, k = x.shape
    block_m = 16 if m <= 16 else (32 if m <= 32 else 64)
    block_n = 32 if m <= 64 else 64
    out = x.new_empty((m, out_features))
    saz = w.scales_and_zeros
    grid = (triton.cdiv(out_features, block_n), triton.cdiv(m, block_m))
    _tg_mm_kernel[grid](x, w.packed, order, saz, out, m, out_features, k // TILE_K, x.stride(0), out.stride(0),
                        saz.stride(0), BLOCK_M=block_m, BLOCK_N=block_n, **_consts(w))
    return out


def tg_dequantize(w: TinygemmWeights, order: torch.Tensor, out_features: int, in_features: int,
                  dtype: torch.dtype) -> torch.Tensor:
    """The whole weight [N, K] in `dtype`."""
    out = torch.empty((out_features, in_features), device=w.packed.device, dtype=dtype)
    saz = w.scales_and_zeros
    block_n = 32
    grid = (triton.cdiv(out_features, block_n), in_features // TILE_K)
    _tg_dequant_kernel[grid](w.packed, order, saz, out, out_features, in_features // TILE_K, out.stride(0),
                             saz.stride(0), BLOCK_N=block_n, **_consts(w))
    return out


def tg_linear(x: torch.Tensor, w: TinygemmWeights, order: torch.Tensor, out_features: int) -> torch.Tensor:
    """x [M, K] contiguous -> x @ W.T [M, N], the kernel picked by M (module docstring)."""
    m = x.shape[0]
    if m <= TINYGEMM_MAX_M:
        return tinygemm_linear(x, w)
    if m <= FUSED_MAX_M:
        return tg_mm(x, w, order, out_features)
    return torch.nn.functional.linear(x, tg_dequantize(w, order, out_features, x.shape[1], x.dtype))
