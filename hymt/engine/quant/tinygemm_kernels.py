"""int4 weights in tinygemm's layout for the rows tinygemm is slow at: dequantize, then cuBLAS.

torch's tinygemm kernel (tinygemm.py) wins at a few rows and falls far behind from ~16. With
its layout as the only copy of the weight, more rows dequantize the weight from the same
words into a temporary in the activations' dtype and run the vendor GEMM. Inside a tile each
row's weights sit in a fixed order of slots (probe_row_order), so the kernel reads a row's
ROW_WORDS words in one contiguous load, unpacks them in slot order and stores each value at
its k. Needs group_size >= TILE_K (a tile inside one group).

Tried and removed: a fused dequantize + tl.dot kernel gathering x in slot order. On the H200
it cut int4 throughput to 0.31x bf16 on the 1.8B (456 req/s) and made the 7B's batch-1 first
token 72 ms (docs/BENCHMARKS.md).
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from hymt.engine.quant.tinygemm import ROW_WORDS, TILE_K, TILE_N, TILE_WORDS, TinygemmWeights, tinygemm_linear

#: Most rows served by torch's tinygemm. H200 sweep of tools/gpu_check_quant.py, 1.8B
#: gate_up: tinygemm 0.009 ms at 1 row, 0.031 at 16, 0.115 at 64; dequantize + cuBLAS has a
#: floor of about the bf16 weight's write (~0.02 ms) plus cuBLAS (0.014) at any row count.
TINYGEMM_MAX_M = 16


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
    if x.shape[0] <= TINYGEMM_MAX_M:
        return tinygemm_linear(x, w)
    return torch.nn.functional.linear(x, tg_dequantize(w, order, out_features, x.shape[1], x.dtype))
