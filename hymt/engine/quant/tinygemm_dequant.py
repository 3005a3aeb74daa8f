"""int4 weights in tinygemm's layout for the rows tinygemm is slow at: dequantize, then cuBLAS.

torch's tinygemm kernel (tinygemm.py) wins at a few rows and falls far behind from ~16. With
its layout as the only copy of the weight, more rows dequantize the weight from the same
words into a temporary in the activations' dtype and run the vendor GEMM. Each weight's
place in the words comes from the probed TileLayout, so this kernel knows nothing of the
packer beyond its tile periodicity: every output element gathers its word (the words of a
tile stay in cache) and the stores are contiguous.

Tried on the H200 and removed (docs/BENCHMARKS.md): a fused dequantize + tl.dot kernel that
reads each row's words in order and gathers x to match (int4 throughput 0.31x bf16 on the
1.8B, the 7B's batch-1 first token 72 ms), and a dequantizer storing each slot's value at
its k (scattered stores: 0.31x again, first token 112 ms on the 7B).
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from hymt.engine.quant.tinygemm import TILE_K, TILE_N, TILE_WORDS, TileLayout, TinygemmWeights, tinygemm_linear

#: Most rows served by torch's tinygemm. H200 sweep of tools/gpu_check_quant.py: at 8 rows it
#: is still ahead of the fused kernel on our own layout for qkv/o/down (1.8B qkv 0.0061 vs
#: 0.0079 ms); this value is the one the end-to-end runs measured.
TINYGEMM_MAX_M = 8
_BLOCK_N = 32  # rows per program: four tiles of 8


@triton.jit
def _tinygemm_dequant_kernel(
    packed_ptr, word_ptr, shift_ptr, saz_ptr, out_ptr, N, K_TILES, stride_o, stride_sg,
    GROUP: tl.constexpr, TILE_N: tl.constexpr, TILE_K: tl.constexpr, TILE_WORDS: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    rn = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    k_tile = tl.program_id(1)
    rk = k_tile * TILE_K + tl.arange(0, TILE_K)
    n_mask = rn < N
    local = (rn % TILE_N)[:, None] * TILE_K + tl.arange(0, TILE_K)[None, :]  # [BN, TILE_K] position in the tile
    word = tl.load(word_ptr + local)
    shift = tl.load(shift_ptr + local)
    base = ((rn // TILE_N) * K_TILES + k_tile) * TILE_WORDS  # [BN] first word of each row's tile
    packed = tl.load(packed_ptr + base[:, None] + word, mask=n_mask[:, None], other=0)
    q = ((packed >> shift) & 0xF).to(tl.float32)
    sz = saz_ptr + (rk // GROUP)[None, :] * stride_sg + rn[:, None] * 2  # [groups, N, 2]: (scale, offset)
    scale = tl.load(sz, mask=n_mask[:, None], other=0).to(tl.float32)
    offset = tl.load(sz + 1, mask=n_mask[:, None], other=0).to(tl.float32)
    w = (q - 8.0) * scale + offset
    tl.store(out_ptr + rn[:, None] * stride_o + rk[None, :], w.to(out_ptr.dtype.element_ty), mask=n_mask[:, None])


def tinygemm_dequantize(w: TinygemmWeights, layout: TileLayout, out_features: int, in_features: int,
                        dtype: torch.dtype) -> torch.Tensor:
    """The whole weight [N, K] in `dtype`."""
    out = torch.empty((out_features, in_features), device=w.packed.device, dtype=dtype)
    saz = w.scales_and_zeros  # [groups, N, 2]
    grid = (triton.cdiv(out_features, _BLOCK_N), in_features // TILE_K)
    _tinygemm_dequant_kernel[grid](
        w.packed, layout.word, layout.shift, saz, out, out_features, in_features // TILE_K, out.stride(0),
        saz.stride(0), GROUP=w.group_size, TILE_N=TILE_N, TILE_K=TILE_K, TILE_WORDS=TILE_WORDS, BLOCK_N=_BLOCK_N,
    )
    return out


def tinygemm_layer_linear(x: torch.Tensor, w: TinygemmWeights, layout: TileLayout, out_features: int) -> torch.Tensor:
    """x [M, K] contiguous -> x @ W.T [M, N]: tinygemm up to TINYGEMM_MAX_M rows, else dequantize + cuBLAS."""
    if x.shape[0] <= TINYGEMM_MAX_M:
        return tinygemm_linear(x, w)
    return torch.nn.functional.linear(x, tinygemm_dequantize(w, layout, out_features, x.shape[1], x.dtype))
