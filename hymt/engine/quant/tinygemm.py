"""int4 weights in the layout of torch's own int4 kernel (`aten._weight_int4pack_mm`, "tinygemm").

tinygemm is the CUDA kernel gpt-fast's int4 path runs on: mma-based, reading a tiled int32
layout made by `aten._convert_weight_to_int4pack`, with one (scale, offset) pair per group and
output row, w = (q - 8) * scale + offset. It ships in every CUDA build of torch (sm80+), so it
costs us no compiled code and launches like any aten op (a few microseconds, where a Triton
launch from Python costs tens).

Our int4 format (int_weights.py) is w = (q - zero) * scale with an integer zero per group,
which is the same line: offset = (8 - zero) * scale. The offset is rounded to bf16 once, an
error of at most 2^-9 of (8 - zero) * scale, well under the half-step int4 rounding itself.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from hymt.engine.quant.int_weights import IntWeights, pack_int4

#: K tiles per packed inner block; 8 is what gpt-fast uses (K must be a multiple of 8 * 16).
INNER_K_TILES = 8
#: Group sizes the kernel supports.
GROUP_SIZES = (32, 64, 128, 256)
#: The packed layout is periodic in tiles of TILE_N rows x TILE_K columns, each tile one
#: contiguous run of TILE_WORDS int32 words, tiles in (n tile, k tile) row-major order.
TILE_N, TILE_K = 8, INNER_K_TILES * 16
TILE_WORDS = TILE_N * TILE_K // 8
#: Words of one row inside a tile, when the packer keeps rows contiguous (row_slot_order).
ROW_WORDS = TILE_K // 8


@dataclass(frozen=True)
class TinygemmWeights:
    """An int4 weight [N, K] in tinygemm's layout.

    Attributes:
        packed: int32, the kernel's opaque tiled layout of the 4-bit values.
        scales_and_zeros: [K // group_size, N, 2] bf16: (scale, offset) per group and row.
        group_size: input columns per group.
    """

    packed: torch.Tensor
    scales_and_zeros: torch.Tensor
    group_size: int


def tinygemm_supports(w: IntWeights, dtype: torch.dtype) -> bool:
    """Whether `w` (with activations of `dtype`) can run on tinygemm on its device."""
    if w.bits != 4 or w.zeros is None or not w.qweight.is_cuda or dtype != torch.bfloat16:
        return False
    n, k = w.scales.shape[0], w.qweight.shape[1] * 2
    major, _ = torch.cuda.get_device_capability(w.qweight.device)
    return major >= 8 and w.group_size in GROUP_SIZES and k % TILE_K == 0 and n % TILE_N == 0


def scales_and_offsets(w: IntWeights) -> torch.Tensor:
    """[N, groups] scales and integer zeros -> tinygemm's [groups, N, 2] (scale, (8 - zero) * scale) in bf16."""
    scale = w.scales.float()
    offset = (8.0 - w.zeros.float()) * scale
    return torch.stack((scale, offset), dim=-1).transpose(0, 1).contiguous().to(torch.bfloat16)


def packer_bytes(qweight: torch.Tensor) -> torch.Tensor:
    """Our packed uint8 [N, K // 2] (even k in the low nibble) -> the packer's input, which
    wants the even k in the HIGH nibble."""
    return ((qweight >> 4) | (qweight << 4)).contiguous()  # uint8: the bits shifted out drop


def _aten_packer(qweight: torch.Tensor) -> torch.Tensor:
    return torch.ops.aten._convert_weight_to_int4pack(packer_bytes(qweight), INNER_K_TILES)


def to_tinygemm(w: IntWeights) -> TinygemmWeights:
    """Repack an int4 IntWeights (on a CUDA device) for `tinygemm_linear`."""
    return TinygemmWeights(_aten_packer(w.qweight), scales_and_offsets(w), w.group_size)


def tinygemm_linear(x: torch.Tensor, w: TinygemmWeights) -> torch.Tensor:
    """x [M, K] bf16 contiguous -> x @ W.T [M, N] bf16."""
    return torch.ops.aten._weight_int4pack_mm(x, w.packed, w.group_size, w.scales_and_zeros)


@dataclass(frozen=True)
class TileLayout:
    """Where each weight of a TILE_N x TILE_K tile sits in the tile's TILE_WORDS words.

    Attributes:
        word: int32 [TILE_N * TILE_K], the word (within the tile) holding weight (n, k) at n * TILE_K + k.
        shift: int32 [TILE_N * TILE_K], that weight's bit offset inside the word.
    """

    word: torch.Tensor
    shift: torch.Tensor


def probe_tile_layout(device: torch.device, packer: Callable[[torch.Tensor], torch.Tensor] = _aten_packer
                      ) -> TileLayout:
    """The packer's nibble placement, read off the packer itself rather than transcribed.

    One tile's positions p = n * TILE_K + k (10 bits) are packed as three 4-bit digit planes;
    reading each word's nibbles back gives the position that landed there. `packer` takes our
    packed uint8 [TILE_N, TILE_K // 2] and returns the tile's words (any shape, int32).
    RuntimeError when the words do not hold each position exactly once.
    """
    positions = torch.arange(TILE_N * TILE_K, device=device, dtype=torch.int32)  # [1024]
    found = torch.zeros(TILE_WORDS * 8, device=device, dtype=torch.int32)
    for digit in range(3):
        plane = ((positions >> (4 * digit)) & 0xF).to(torch.uint8).reshape(TILE_N, TILE_K)
        words = packer(pack_int4(plane)).reshape(-1).to(torch.int32)
        if words.numel() != TILE_WORDS:
            raise RuntimeError(f"torch's int4 packer gave {words.numel()} words for one tile, not {TILE_WORDS}")
        nibbles = (words[:, None] >> torch.arange(0, 32, 4, device=device, dtype=torch.int32)) & 0xF
        found |= nibbles.reshape(-1) << (4 * digit)  # slot = word * 8 + nibble
    if not torch.equal(found.sort().values, positions):
        raise RuntimeError("torch's int4 packer does not place one weight per nibble as expected")
    slots = torch.empty_like(found)
    slots[found.long()] = torch.arange(found.numel(), device=device, dtype=torch.int32)
    return TileLayout(word=slots // 8, shift=(slots % 8) * 4)


@dataclass(frozen=True)
class SlotPermutation:
    """How a row's TILE_K slots (row_slot_order) land in k order by reshaping and permuting axes.

    When slot_k is a permutation of the bits of the slot index, a row's TILE_K values in slot
    order reshaped to `slot_shape` and permuted by `k_axes` are in k order: kernels unpack a
    tile's words contiguously and reorder them in registers, and x needs no reordering.
    torch's packer (aten/src/ATen/native/cuda/int4mm.cu) places slot 32t + 8i + 4h + j at
    k = 32i + 8j + 2t + h (lane t % 4, word i, nibble half h, byte j): slot_shape (4, 4, 2, 4),
    k_axes (1, 3, 0, 2). That is read off the packer at load, not assumed.

    Attributes:
        slot_shape: sizes of the runs of slot bits (most significant first) that stay
            consecutive in k; their product is TILE_K.
        k_axes: the slot_shape axes in k order, most significant first.
    """

    slot_shape: tuple[int, ...]
    k_axes: tuple[int, ...]


def row_slot_order(layout: TileLayout) -> torch.Tensor | None:
    """slot_k, int32 [TILE_K], the k (within its tile) of each slot, when every row of the
    tile owns its ROW_WORDS words in the same slot order (slot = word * 8 + nibble); None for
    any other placement."""
    slots = (layout.word * 8 + layout.shift // 4).reshape(TILE_N, TILE_K).long()  # [row, k] -> slot in tile
    row_start = (torch.arange(TILE_N, device=slots.device) * TILE_K)[:, None]
    in_row = slots - row_start  # [row, k] slot within the row's words
    every_k = torch.arange(TILE_K, device=slots.device)
    if not (in_row == in_row[0]).all() or not torch.equal(in_row[0].sort().values, every_k):
        return None
    slot_k = torch.empty(TILE_K, dtype=torch.int32, device=slots.device)
    slot_k[in_row[0]] = torch.arange(TILE_K, dtype=torch.int32, device=slots.device)
    return slot_k


def slot_permutation(slot_k: torch.Tensor) -> SlotPermutation | None:
    """The SlotPermutation taking slots to k order when slot_k permutes the bits of the slot
    index (slot_k[s] is the OR of slot_k[2^b] over the bits b of s), else None."""
    bits = TILE_K.bit_length() - 1
    k_bit = []  # k bit of each slot bit
    for b in range(bits):
        k = int(slot_k[1 << b])
        if k <= 0 or k & (k - 1):
            return None
        k_bit.append(k.bit_length() - 1)
    expected = [sum(1 << k_bit[b] for b in range(bits) if s >> b & 1) for s in range(TILE_K)]
    if slot_k.tolist() != expected:
        return None
    runs: list[list[int]] = []  # slot bits, most significant first, in runs consecutive in k
    for b in reversed(range(bits)):
        if runs and k_bit[runs[-1][-1]] == k_bit[b] + 1:
            runs[-1].append(b)
        else:
            runs.append([b])
    k_axes = sorted(range(len(runs)), key=lambda a: -k_bit[runs[a][-1]])
    return SlotPermutation(tuple(1 << len(run) for run in runs), tuple(k_axes))
