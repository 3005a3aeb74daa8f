"""Triton kernels reading int4 weights in tinygemm's layout, for the rows tinygemm is slow at.

torch's tinygemm kernel (tinygemm.py) wins at a few rows and falls far behind from ~16. With
its layout as the only copy of the weight, more rows are served from the same words:
  TINYGEMM_MAX_M < M <= FUSED_MAX_M: fused dequantize + tl.dot, one tile (TILE_K k) a step;
  M > FUSED_MAX_M: dequantize the weight once, then the vendor GEMM (compute-bound sizes).
Both read each row's ROW_WORDS words of a tile in one contiguous load and unpack them in
slot order (SlotOrder), never gathering a weight: x is permuted into slot order instead, one
index_select of [M, K] per call, and the product is unchanged. The dequantized weight stays
in slot order for the same reason.

Tried on the H200 and removed (docs/BENCHMARKS.md): dequantizers gathering each weight by a
probed (word, shift) map (0.66x bf16 throughput on the 1.8B) or storing each slot at its k
(scattered stores, 0.31x), and a fused kernel gathering x in slot order inside the loop.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from hymt.engine.quant.tinygemm import (
    ROW_WORDS, TILE_K, TILE_N, TILE_WORDS, SlotOrder, TinygemmWeights, tinygemm_linear,
)

#: Most rows served by torch's tinygemm. H200 sweep of tools/gpu_check_quant.py: at 8 rows it
#: is still ahead of the fused kernel on our own layout for qkv/o/down (1.8B qkv 0.0061 vs
#: 0.0079 ms), at 16 behind on qkv and gate_up.
TINYGEMM_MAX_M = 8
#: Most rows served by the fused kernel; above, dequantize + cuBLAS (as for our own int4).
FUSED_MAX_M = 256


@triton.jit
def _slot_tile(w_ptr, row_word, n_mask, k_tile, slot_k_ptr, saz_ptr, rn, stride_sg,
               GROUP: tl.constexpr, TILE_K: tl.constexpr, TILE_WORDS: tl.constexpr, ROW_WORDS: tl.constexpr,
               BLOCK_N: tl.constexpr, UNPACK_3D: tl.constexpr):
    """Rows rn of k tile `k_tile`, dequantized, in slot order -> float32 [BLOCK_N, TILE_K]."""
    first = row_word + k_tile * TILE_WORDS  # [BN] the row's first word in this tile
    if UNPACK_3D:  # one load per word, then split into nibbles
        words = tl.load(w_ptr + first[:, None] + tl.arange(0, ROW_WORDS)[None, :], mask=n_mask[:, None], other=0)
        q = (words[:, :, None] >> (tl.arange(0, 8) * 4)[None, None, :]) & 0xF  # [BN, ROW_WORDS, 8]
        q = tl.reshape(q, (BLOCK_N, TILE_K))  # slot = word * 8 + nibble
    else:  # each slot loads its word (eight slots share one, from L1) and shifts
        slot = tl.arange(0, TILE_K)
        words = tl.load(w_ptr + first[:, None] + (slot // 8)[None, :], mask=n_mask[:, None], other=0)
        q = (words >> ((slot % 8) * 4)[None, :]) & 0xF
    q = q.to(tl.float32)
    if GROUP >= TILE_K:  # the tile lies in one group: a (scale, offset) per row
        sz = saz_ptr + (k_tile * TILE_K // GROUP) * stride_sg + rn * 2  # [groups, N, 2]
        scale = tl.load(sz, mask=n_mask, other=0).to(tl.float32)[:, None]
        offset = tl.load(sz + 1, mask=n_mask, other=0).to(tl.float32)[:, None]
    else:  # the group of each slot follows its k
        group = (k_tile * TILE_K + tl.load(slot_k_ptr + tl.arange(0, TILE_K))) // GROUP  # [TILE_K]
        sz = saz_ptr + group[None, :] * stride_sg + rn[:, None] * 2
        scale = tl.load(sz, mask=n_mask[:, None], other=0).to(tl.float32)
        offset = tl.load(sz + 1, mask=n_mask[:, None], other=0).to(tl.float32)
    return (q - 8.0) * scale + offset


@triton.jit
def _slot_mm_kernel(
    x_ptr, w_ptr, slot_k_ptr, saz_ptr, out_ptr, M, N, K_TILES, stride_xm, stride_om, stride_sg,
    GROUP: tl.constexpr, TILE_N: tl.constexpr, TILE_K: tl.constexpr, TILE_WORDS: tl.constexpr,
    ROW_WORDS: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, UNPACK_3D: tl.constexpr,
):
    rm = tl.program_id(1) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    m_mask = rm < M
    n_mask = rn < N
    row_word = (rn // TILE_N) * K_TILES * TILE_WORDS + (rn % TILE_N) * ROW_WORDS  # [BN] in k tile 0
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k_tile in range(0, K_TILES):
        rk = k_tile * TILE_K + tl.arange(0, TILE_K)
        a = tl.load(x_ptr + rm[:, None] * stride_xm + rk[None, :], mask=m_mask[:, None], other=0.0)  # [BM, TILE_K]
        w = _slot_tile(w_ptr, row_word, n_mask, k_tile, slot_k_ptr, saz_ptr, rn, stride_sg,
                       GROUP, TILE_K, TILE_WORDS, ROW_WORDS, BLOCK_N, UNPACK_3D)
        acc = tl.dot(a, tl.trans(w.to(a.dtype)), acc)
    out = out_ptr + rm[:, None] * stride_om + rn[None, :]
    tl.store(out, acc.to(out_ptr.dtype.element_ty), mask=m_mask[:, None] & n_mask[None, :])


@triton.jit
def _slot_dequant_kernel(
    w_ptr, slot_k_ptr, saz_ptr, out_ptr, N, K_TILES, stride_o, stride_sg,
    GROUP: tl.constexpr, TILE_N: tl.constexpr, TILE_K: tl.constexpr, TILE_WORDS: tl.constexpr,
    ROW_WORDS: tl.constexpr, BLOCK_N: tl.constexpr, UNPACK_3D: tl.constexpr,
):
    rn = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    k_tile = tl.program_id(1)
    n_mask = rn < N
    row_word = (rn // TILE_N) * K_TILES * TILE_WORDS + (rn % TILE_N) * ROW_WORDS
    w = _slot_tile(w_ptr, row_word, n_mask, k_tile, slot_k_ptr, saz_ptr, rn, stride_sg,
                   GROUP, TILE_K, TILE_WORDS, ROW_WORDS, BLOCK_N, UNPACK_3D)
    out = out_ptr + rn[:, None] * stride_o + k_tile * TILE_K + tl.arange(0, TILE_K)[None, :]
    tl.store(out, w.to(out_ptr.dtype.element_ty), mask=n_mask[:, None])


def _consts(w: TinygemmWeights, unpack_3d: bool) -> dict:
    return dict(GROUP=w.group_size, TILE_N=TILE_N, TILE_K=TILE_K, TILE_WORDS=TILE_WORDS, ROW_WORDS=ROW_WORDS,
                UNPACK_3D=unpack_3d)


def slot_mm(x_slot: torch.Tensor, w: TinygemmWeights, order: SlotOrder, out_features: int, *,
            block_n: int | None = None, unpack_3d: bool = True, num_warps: int = 4, num_stages: int = 3) -> torch.Tensor:
    """x_slot [M, K] (x in slot order, contiguous) -> x @ W.T [M, N], fused. The launch knobs
    are exposed for tools/gpu_check_quant.py's sweep."""
    m, k = x_slot.shape
    block_m = 16 if m <= 16 else (32 if m <= 32 else 64)
    block_n = block_n or (32 if m <= 64 else 64)
    out = x_slot.new_empty((m, out_features))
    saz = w.scales_and_zeros  # [groups, N, 2]
    grid = (triton.cdiv(out_features, block_n), triton.cdiv(m, block_m))
    _slot_mm_kernel[grid](x_slot, w.packed, order.slot_k, saz, out, m, out_features, k // TILE_K, x_slot.stride(0),
                          out.stride(0), saz.stride(0), BLOCK_M=block_m, BLOCK_N=block_n, num_warps=num_warps,
                          num_stages=num_stages, **_consts(w, unpack_3d))
    return out


def slot_dequantize(w: TinygemmWeights, order: SlotOrder, out_features: int, dtype: torch.dtype, *,
                    unpack_3d: bool = True) -> torch.Tensor:
    """The whole weight in slot order, W[:, order.perm]: [N, K] in `dtype`."""
    in_features = order.perm.numel()
    out = torch.empty((out_features, in_features), device=w.packed.device, dtype=dtype)
    saz = w.scales_and_zeros
    block_n = 32
    grid = (triton.cdiv(out_features, block_n), in_features // TILE_K)
    _slot_dequant_kernel[grid](w.packed, order.slot_k, saz, out, out_features, in_features // TILE_K, out.stride(0),
                               saz.stride(0), BLOCK_N=block_n, **_consts(w, unpack_3d))
    return out


def tinygemm_dequantize(w: TinygemmWeights, order: SlotOrder, out_features: int, dtype: torch.dtype) -> torch.Tensor:
    """The whole weight [N, K] in `dtype`, in k order (for checks; the forward pass never needs it)."""
    w_slot = slot_dequantize(w, order, out_features, dtype)
    out = torch.empty_like(w_slot)
    out[:, order.perm] = w_slot
    return out


def tinygemm_layer_linear(x: torch.Tensor, w: TinygemmWeights, order: SlotOrder, out_features: int) -> torch.Tensor:
    """x [M, K] contiguous -> x @ W.T [M, N], the kernel picked by M (module docstring)."""
    m = x.shape[0]
    if m <= TINYGEMM_MAX_M:
        return tinygemm_linear(x, w)
    x_slot = x.index_select(1, order.perm)  # [M, K] in slot order
    if m <= FUSED_MAX_M:
        return slot_mm(x_slot, w, order, out_features)
    return torch.nn.functional.linear(x_slot, slot_dequantize(w, order, out_features, x.dtype))
