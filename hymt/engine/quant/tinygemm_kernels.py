"""Triton kernels reading int4 weights in tinygemm's layout, for the rows tinygemm is slow at.

torch's tinygemm kernel (tinygemm.py) wins at a few rows and falls far behind from ~16. With
its layout as the only copy of the weight, more rows are served from the same words:
  TINYGEMM_MAX_M < M <= FUSED_MAX_M: fused dequantize + tl.dot;
  M > FUSED_MAX_M: dequantize the weight once, then the vendor GEMM.
Both read each row's ROW_WORDS words of a tile in one contiguous load and unpack them in
slot order (SlotOrder), never gathering a weight: x is permuted into slot order instead, one
index_select of [M, K] per call, and the product is unchanged. The dequantized weight stays
in slot order for the same reason. Read as bytes, a row's words are our own int4 packing
(int_weights.py) of its weights in slot order, so the kernels are those of
triton_int_matmul.py with another addressing and tinygemm's (scale, offset) pairs.

Tried on the H200 and removed (docs/BENCHMARKS.md): dequantizers gathering each weight by a
probed (word, shift) map (0.66x bf16 throughput on the 1.8B) or storing each slot at its k
(scattered stores, 0.31x); a fused kernel gathering x in slot order inside the loop; and
first versions of the kernels here whose weight loads did not vectorize: Triton cannot see
that a row's bytes start 16-byte aligned through the tile arithmetic, so it issued 1-byte
loads without cp.async pipelining, 2-3x slower than our int4's fused kernel at 16-64 rows.
The multiple_of / max_contiguous hints in _load_slot_tile are what make the loads 16-byte
(checked in the sm_90 PTX: the same cp.async as triton_int_matmul's).
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from hymt.engine.quant.tinygemm import (
    ROW_WORDS, TILE_K, TILE_N, TILE_WORDS, SlotOrder, TinygemmWeights, tinygemm_linear,
)
from hymt.engine.quant.triton_int_matmul import FUSED_MAX_M  # the crossover of our own int4, measured there

#: Most rows served by torch's tinygemm. H200 sweep of tools/gpu_check_quant.py: at 8 rows it
#: is still ahead of the fused kernel on our own layout for qkv/o/down (1.8B qkv 0.0061 vs
#: 0.0079 ms), at 16 behind on qkv and gate_up.
TINYGEMM_MAX_M = 8


@triton.jit
def _load_slot_tile(w8_ptr, row_byte, n_mask, k0, slot_k_ptr, saz_ptr, rn, stride_sg,
                    GROUP: tl.constexpr, TILE_K: tl.constexpr, TILE_BYTES: tl.constexpr,
                    BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """Rows rn, slot columns [k0, k0 + BLOCK_K) (inside one tile), dequantized -> float32 [BLOCK_N, BLOCK_K].

    Byte j of a row's words holds slot 2j in its low nibble and 2j + 1 in the high one
    (nibble i of a little-endian word is slot 8 * word + i): _load_q's unpacking.
    """
    tile = k0 // TILE_K
    row = tl.multiple_of(row_byte + tile * TILE_BYTES, 16)  # [BN]: the hints let the loads vectorize
    rb = tl.max_contiguous(tl.multiple_of((k0 % TILE_K) // 2 + tl.arange(0, BLOCK_K // 2), 16), BLOCK_K // 2)
    packed = tl.load(w8_ptr + row[:, None] + rb[None, :], mask=n_mask[:, None], other=0)
    low = (packed & 0xF).to(tl.float32)
    high = ((packed >> 4) & 0xF).to(tl.float32)
    q = tl.reshape(tl.join(low, high), (BLOCK_N, BLOCK_K))  # slot 2j low, 2j + 1 high
    if GROUP >= TILE_K:  # the tile lies in one group: a (scale, offset) per row
        sz = saz_ptr + (k0 // GROUP) * stride_sg + rn * 2  # [groups, N, 2]
        scale = tl.load(sz, mask=n_mask, other=0).to(tl.float32)[:, None]
        offset = tl.load(sz + 1, mask=n_mask, other=0).to(tl.float32)[:, None]
    else:  # the group of each slot follows its k
        slot_k = tl.load(slot_k_ptr + k0 % TILE_K + tl.arange(0, BLOCK_K))
        group = (tile * TILE_K + slot_k) // GROUP  # [BLOCK_K]
        sz = saz_ptr + group[None, :] * stride_sg + rn[:, None] * 2
        scale = tl.load(sz, mask=n_mask[:, None], other=0).to(tl.float32)
        offset = tl.load(sz + 1, mask=n_mask[:, None], other=0).to(tl.float32)
    return (q - 8.0) * scale + offset


@triton.jit
def _row_byte(rn, K_TILES, TILE_N: tl.constexpr, TILE_BYTES: tl.constexpr, ROW_BYTES: tl.constexpr):
    """[BN] byte offset of each row's words in k tile 0 (tiles in (n tile, k tile) order)."""
    return (rn // TILE_N) * K_TILES * TILE_BYTES + (rn % TILE_N) * ROW_BYTES


@triton.jit
def _slot_mm_kernel(
    x_ptr, w8_ptr, slot_k_ptr, saz_ptr, out_ptr, M, N, K, stride_xm, stride_om, stride_sg,
    GROUP: tl.constexpr, TILE_N: tl.constexpr, TILE_K: tl.constexpr, TILE_BYTES: tl.constexpr,
    ROW_BYTES: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    rm = tl.program_id(1) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    m_mask = rm < M
    n_mask = rn < N
    row_byte = _row_byte(rn, K // TILE_K, TILE_N, TILE_BYTES, ROW_BYTES)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(x_ptr + rm[:, None] * stride_xm + rk[None, :], mask=m_mask[:, None], other=0.0)  # [BM, BK]
        w = _load_slot_tile(w8_ptr, row_byte, n_mask, k0, slot_k_ptr, saz_ptr, rn, stride_sg,
                            GROUP, TILE_K, TILE_BYTES, BLOCK_N, BLOCK_K)
        acc = tl.dot(a, tl.trans(w.to(a.dtype)), acc)
    out = out_ptr + rm[:, None] * stride_om + rn[None, :]
    tl.store(out, acc.to(out_ptr.dtype.element_ty), mask=m_mask[:, None] & n_mask[None, :])


@triton.jit
def _slot_dequant_kernel(
    w8_ptr, slot_k_ptr, saz_ptr, out_ptr, N, K, stride_o, stride_sg,
    GROUP: tl.constexpr, TILE_N: tl.constexpr, TILE_K: tl.constexpr, TILE_BYTES: tl.constexpr,
    ROW_BYTES: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    rn = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    k0 = tl.program_id(1) * BLOCK_K
    n_mask = rn < N
    row_byte = _row_byte(rn, K // TILE_K, TILE_N, TILE_BYTES, ROW_BYTES)
    w = _load_slot_tile(w8_ptr, row_byte, n_mask, k0, slot_k_ptr, saz_ptr, rn, stride_sg,
                        GROUP, TILE_K, TILE_BYTES, BLOCK_N, BLOCK_K)
    out = out_ptr + rn[:, None] * stride_o + k0 + tl.arange(0, BLOCK_K)[None, :]
    tl.store(out, w.to(out_ptr.dtype.element_ty), mask=n_mask[:, None])


def _consts(w: TinygemmWeights) -> dict:
    return dict(GROUP=w.group_size, TILE_N=TILE_N, TILE_K=TILE_K, TILE_BYTES=TILE_WORDS * 4, ROW_BYTES=ROW_WORDS * 4)


def _bytes(w: TinygemmWeights) -> torch.Tensor:
    return w.packed.view(torch.uint8)  # little-endian words, on every device torch supports


def slot_mm(x_slot: torch.Tensor, w: TinygemmWeights, order: SlotOrder, out_features: int, *,
            block_n: int | None = None, block_k: int | None = None, num_warps: int = 4,
            num_stages: int = 3) -> torch.Tensor:
    """x_slot [M, K] (x in slot order, contiguous) -> x @ W.T [M, N], fused. Blocks as our
    int_mm's up to 64 rows; the launch knobs are exposed for tools/gpu_check_quant.py."""
    m, k = x_slot.shape
    block_m = 16 if m <= 16 else (32 if m <= 32 else 64)
    block_n = block_n or 32
    block_k = block_k or TILE_K
    if TILE_K % block_k or block_k < 32:  # inside one tile, and 16-byte rows of bytes (_load_slot_tile)
        raise ValueError(f"block_k must divide {TILE_K} and be >= 32, got {block_k}")
    out = x_slot.new_empty((m, out_features))
    saz = w.scales_and_zeros  # [groups, N, 2]
    grid = (triton.cdiv(out_features, block_n), triton.cdiv(m, block_m))
    _slot_mm_kernel[grid](x_slot, _bytes(w), order.slot_k, saz, out, m, out_features, k, x_slot.stride(0),
                          out.stride(0), saz.stride(0), BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k,
                          num_warps=num_warps, num_stages=num_stages, **_consts(w))
    return out


def slot_dequantize(w: TinygemmWeights, order: SlotOrder, out_features: int, dtype: torch.dtype) -> torch.Tensor:
    """The whole weight in slot order, W[:, order.perm]: [N, K] in `dtype`."""
    in_features = order.perm.numel()
    out = torch.empty((out_features, in_features), device=w.packed.device, dtype=dtype)
    saz = w.scales_and_zeros
    block_n = 32
    grid = (triton.cdiv(out_features, block_n), in_features // TILE_K)
    _slot_dequant_kernel[grid](_bytes(w), order.slot_k, saz, out, out_features, in_features, out.stride(0),
                               saz.stride(0), BLOCK_N=block_n, BLOCK_K=TILE_K, **_consts(w))
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
