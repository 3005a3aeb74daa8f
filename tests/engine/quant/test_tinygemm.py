"""The int4 -> tinygemm repacking: scale/offset mapping checked with torch's CPU twin of the kernel.

The CUDA packer itself (aten._convert_weight_to_int4pack) only runs on a GPU; tools/gpu_check_quant.py
checks the CUDA path against the same float reference.
"""
import pytest
import torch

from hymt.engine.quant.int_weights import dequantize_int, quantize_int, unpack_int4
from hymt.engine.quant.tinygemm import packer_bytes, scales_and_offsets, tinygemm_supports


def _rel(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a.float() - b.float()).norm() / b.float().norm())


@pytest.mark.parametrize("group", [32, 128])
def test_scales_and_offsets_reproduce_our_dequantization(group):
    torch.manual_seed(0)
    w = torch.randn(64, 256) * 0.02 + 0.01  # an offset so zero points vary across groups
    q = quantize_int(w, 4, group, torch.bfloat16)
    saz = scales_and_offsets(q)
    assert saz.shape == (256 // group, 64, 2) and saz.dtype == torch.bfloat16
    packed = torch.ops.aten._convert_weight_to_int4pack_for_cpu(unpack_int4(q.qweight).to(torch.int32), 8)
    x = torch.randn(5, 256).to(torch.bfloat16)
    out = torch.ops.aten._weight_int4pack_mm_for_cpu(x, packed, group, saz)
    ref = x.float() @ dequantize_int(q, torch.float32).T
    assert _rel(out, ref) < 1e-2  # bf16 output rounding and the bf16 offset


def test_offsets_with_wrong_sign_fail_the_same_check():
    # guards the test above: the mapping must be offset = (8 - zero) * scale, not (zero - 8) * scale
    torch.manual_seed(1)
    q = quantize_int(torch.randn(64, 256) * 0.02 + 0.01, 4, 128, torch.bfloat16)
    saz = scales_and_offsets(q).clone()
    saz[..., 1] = -saz[..., 1]
    packed = torch.ops.aten._convert_weight_to_int4pack_for_cpu(unpack_int4(q.qweight).to(torch.int32), 8)
    x = torch.randn(5, 256).to(torch.bfloat16)
    out = torch.ops.aten._weight_int4pack_mm_for_cpu(x, packed, 128, saz)
    assert _rel(out, x.float() @ dequantize_int(q, torch.float32).T) > 0.1


def test_packer_bytes_put_the_even_weight_in_the_high_nibble():
    vals = torch.randint(0, 16, (8, 32), dtype=torch.uint8)
    ours = vals[:, 0::2] | (vals[:, 1::2] << 4)
    expected = (vals[:, 0::2] << 4) | vals[:, 1::2]  # the layout torch's packer documents (torchao)
    assert torch.equal(packer_bytes(ours), expected)


def test_tinygemm_is_not_offered_on_cpu_or_for_int8():
    q4 = quantize_int(torch.randn(16, 256), 4, 128, torch.bfloat16)
    q8 = quantize_int(torch.randn(16, 256), 8, 128, torch.bfloat16)
    assert not tinygemm_supports(q4, torch.bfloat16)
    assert not tinygemm_supports(q8, torch.bfloat16)


def _fake_packer(slot_of_position: torch.Tensor):
    """A stand-in for torch's CUDA packer: same tile periodicity, each tile position
    (n * TILE_K + k) placed in the nibble slot `slot_of_position` names (slot = word * 8 + nibble)."""
    from hymt.engine.quant.tinygemm import TILE_K, TILE_N

    def pack(qweight: torch.Tensor) -> torch.Tensor:
        vals = unpack_int4(qweight).to(torch.int64)  # [N, K]
        n, k = vals.shape
        tiles = vals.reshape(n // TILE_N, TILE_N, k // TILE_K, TILE_K).permute(0, 2, 1, 3)
        tiles = tiles.reshape(n // TILE_N, k // TILE_K, TILE_N * TILE_K)
        slots = torch.empty_like(tiles)
        slots[..., slot_of_position] = tiles
        words = (slots.reshape(*slots.shape[:2], -1, 8) << torch.arange(0, 32, 4)).sum(-1)
        return torch.where(words >= 2**31, words - 2**32, words).to(torch.int32)

    return pack


def test_probe_reads_the_packers_placement():
    from hymt.engine.quant.tinygemm import TILE_K, TILE_N, probe_tile_layout

    torch.manual_seed(2)
    perm = torch.randperm(TILE_N * TILE_K)
    layout = probe_tile_layout(torch.device("cpu"), _fake_packer(perm))
    assert torch.equal(layout.word * 8 + layout.shift // 4, perm.to(torch.int32))


def test_probe_rejects_a_packer_that_loses_weights():
    from hymt.engine.quant.tinygemm import TILE_K, TILE_N, probe_tile_layout

    perm = torch.arange(TILE_N * TILE_K)
    perm[1] = perm[0]  # two positions in one nibble
    with pytest.raises(RuntimeError, match="packer"):
        probe_tile_layout(torch.device("cpu"), _fake_packer(perm))


#: k of each slot in a row's words as torch's CUDA packer places them (int4mm.cu,
#: matrix_to_m16n8k16_Bint4_layout): slot 32t + 8i + 4h + j holds k = 32i + 8j + 2t + h.
CUDA_SLOT_K = [32 * (s >> 3 & 3) + 8 * (s & 3) + 2 * (s >> 5) + (s >> 2 & 1) for s in range(128)]


def _bit_permuted_slot_k(seed: int) -> torch.Tensor:
    """slot_k of a random permutation of the slot index's 7 bits."""
    k_bit = torch.randperm(7, generator=torch.Generator().manual_seed(seed))
    return torch.tensor([sum(1 << int(k_bit[b]) for b in range(7) if s >> b & 1) for s in range(128)],
                        dtype=torch.int32)


def _row_packer(slot_k: torch.Tensor):
    """A fake packer with the CUDA packer's structure: each row of a tile in its own ROW_WORDS
    words, slot s of every row holding k = slot_k[s]."""
    from hymt.engine.quant.tinygemm import TILE_K, TILE_N

    slot_of_k = torch.empty(TILE_K, dtype=torch.long)
    slot_of_k[slot_k.long()] = torch.arange(TILE_K)
    return _fake_packer((torch.arange(TILE_N)[:, None] * TILE_K + slot_of_k[None, :]).reshape(-1))


def test_row_slot_order_reads_a_row_contiguous_packer():
    from hymt.engine.quant.tinygemm import TILE_K, TILE_N, probe_tile_layout, row_slot_order

    slot_k = torch.randperm(TILE_K, generator=torch.Generator().manual_seed(4)).to(torch.int32)
    assert torch.equal(row_slot_order(probe_tile_layout(torch.device("cpu"), _row_packer(slot_k))), slot_k)
    scattered = _fake_packer(torch.randperm(TILE_N * TILE_K, generator=torch.Generator().manual_seed(5)))
    assert row_slot_order(probe_tile_layout(torch.device("cpu"), scattered)) is None


def test_slot_permutation_of_the_cuda_packers_order():
    from hymt.engine.quant.tinygemm import SlotPermutation, slot_permutation

    assert slot_permutation(torch.tensor(CUDA_SLOT_K, dtype=torch.int32)) == SlotPermutation((4, 4, 2, 4), (1, 3, 0, 2))
    assert slot_permutation(torch.arange(128, dtype=torch.int32)) == SlotPermutation((128,), (0,))


@pytest.mark.parametrize("seed", range(4))
def test_slot_permutation_puts_slots_in_k_order(seed):
    from hymt.engine.quant.tinygemm import slot_permutation

    slot_k = _bit_permuted_slot_k(seed)
    perm = slot_permutation(slot_k)
    assert perm is not None
    in_k_order = slot_k.reshape(perm.slot_shape).permute(perm.k_axes).reshape(-1)  # what the kernels do to a row
    assert torch.equal(in_k_order, torch.arange(128, dtype=torch.int32))


def test_slot_permutation_rejects_orders_that_are_not_bit_permutations():
    from hymt.engine.quant.tinygemm import slot_permutation

    swapped = torch.arange(128, dtype=torch.int32)
    swapped[[5, 6]] = swapped[[6, 5]]  # bits 0 and 1 map to 1 and 2 but 3 no longer to 3
    assert slot_permutation(swapped) is None
    assert slot_permutation(torch.randperm(128, generator=torch.Generator().manual_seed(9)).to(torch.int32)) is None


def _packed_case(n: int, k: int, group: int, slot_k: torch.Tensor, seed: int = 0):
    from hymt.engine.quant.tinygemm import TinygemmWeights, slot_permutation

    torch.manual_seed(seed)
    q = quantize_int(torch.randn(n, k) * 0.02 + 0.01, 4, group, torch.float32)
    saz = scales_and_offsets(q).float()  # [groups, N, 2]
    scale = saz[..., 0].T.repeat_interleave(group, dim=1)  # [N, K]
    offset = saz[..., 1].T.repeat_interleave(group, dim=1)
    expected = (unpack_int4(q.qweight).float() - 8) * scale + offset  # what tinygemm's words stand for
    return TinygemmWeights(_row_packer(slot_k)(q.qweight), saz, group), slot_permutation(slot_k), expected, q


ORDERS = {"cuda": torch.tensor(CUDA_SLOT_K, dtype=torch.int32), "random bits": _bit_permuted_slot_k(3)}


@pytest.mark.usefixtures("triton_interpreter")
@pytest.mark.parametrize("order", list(ORDERS))
@pytest.mark.parametrize("group", [32, 64, 128, 256])
def test_dequantize_kernel_inverts_the_packing(group, order):
    pytest.importorskip("triton")
    from hymt.engine.quant.tinygemm_kernels import tinygemm_dequantize

    tg, perm, expected, q = _packed_case(48, 512, group, ORDERS[order], seed=3)
    out = tinygemm_dequantize(tg, perm, 48, torch.float32)
    torch.testing.assert_close(out, expected, rtol=1e-6, atol=1e-7)
    # the same weights as our own dequantization, up to the offsets' bf16 rounding
    assert (out - dequantize_int(q, torch.float32)).abs().max() <= 2**-8 * 8 * float(q.scales.max())


@pytest.mark.usefixtures("triton_interpreter")
@pytest.mark.parametrize("order", list(ORDERS))
@pytest.mark.parametrize("group", [64, 128])
def test_fused_kernel_reads_x_as_it_is(group, order):
    pytest.importorskip("triton")
    from hymt.engine.quant.tinygemm_kernels import tinygemm_mm

    tg, perm, expected, _ = _packed_case(40, 256, group, ORDERS[order], seed=8)
    x = torch.randn(20, 256)
    torch.testing.assert_close(tinygemm_mm(x, tg, perm, 40), x @ expected.T, rtol=1e-3, atol=1e-3)


@pytest.mark.usefixtures("triton_interpreter")
def test_fused_kernel_with_wide_programs(monkeypatch):
    """Outputs of at least WIDE_N run in programs of 64 rows (40 outputs here: one, masked)."""
    pytest.importorskip("triton")
    from hymt.engine.quant import tinygemm_kernels as kernels

    monkeypatch.setattr(kernels, "WIDE_N", 40)
    tg, perm, expected, _ = _packed_case(40, 256, 128, ORDERS["cuda"], seed=4)
    x = torch.randn(70, 256)  # two M-blocks of 64
    torch.testing.assert_close(kernels.tinygemm_mm(x, tg, perm, 40), x @ expected.T, rtol=1e-3, atol=1e-3)


@pytest.mark.usefixtures("triton_interpreter")
def test_linear_beyond_tinygemm_rows_reads_the_same_words():
    pytest.importorskip("triton")
    from hymt.engine.quant.tinygemm_kernels import TG_FUSED_MAX_M, TINYGEMM_MAX_M, tinygemm_layer_linear

    tg, perm, expected, _ = _packed_case(40, 256, 128, ORDERS["cuda"], seed=7)
    for rows in (TINYGEMM_MAX_M + 1, TG_FUSED_MAX_M + 1):  # the fused kernel, then dequantize + GEMM
        x = torch.randn(rows, 256)
        torch.testing.assert_close(tinygemm_layer_linear(x, tg, perm, 40), x @ expected.T, rtol=1e-3, atol=1e-3)


def test_small_weights_skip_the_fused_kernel(monkeypatch):
    from hymt.engine.quant import tinygemm_kernels as kernels

    calls = []
    monkeypatch.setattr(kernels, "tinygemm_mm", lambda *a, **k: calls.append("fused"))
    monkeypatch.setattr(kernels, "tinygemm_dequantize",
                        lambda *a, **k: calls.append("dequantize") or torch.zeros(8, 256))
    w = kernels.TinygemmWeights(torch.zeros(1, dtype=torch.int32), torch.zeros(2, 8, 2), 128)
    perm = kernels.SlotPermutation((128,), (0,))
    rows = kernels.TINYGEMM_MAX_M + 1
    kernels.tinygemm_layer_linear(torch.zeros(rows, 256), w, perm, 8)  # 8 x 256 weights
    monkeypatch.setattr(kernels, "FUSED_MIN_WEIGHTS", 8 * 256)
    kernels.tinygemm_layer_linear(torch.zeros(rows, 256), w, perm, 8)
    kernels.tinygemm_layer_linear(torch.zeros(kernels.TG_FUSED_MAX_M, 256), w, perm, 8)
    kernels.tinygemm_layer_linear(torch.zeros(kernels.TG_FUSED_MAX_M + 1, 256), w, perm, 8)
    assert calls == ["dequantize", "fused", "fused", "dequantize"]


def int4_layer_after_finalize() -> tuple:
    from hymt.engine.quant import IntWeightLinear, resolve_scheme

    layer = IntWeightLinear(256, 16, resolve_scheme("int4", "cpu"), dtype=torch.float32)
    w = torch.randn(16, 256)
    layer.load_float_rows(0, w)
    before = layer.qweight.clone()
    layer.finalize()
    return layer, before


def test_int4_keeps_its_own_layout_where_tinygemm_does_not_run(monkeypatch):
    from hymt.engine.quant import int_linear, resolve_scheme

    assert resolve_scheme("int4", "cpu").kernel == "tinygemm" and resolve_scheme("int8", "cpu").kernel == "triton"
    layer, before = int4_layer_after_finalize()  # CPU: tinygemm needs CUDA sm80+ in bf16
    assert layer.tinygemm is None and torch.equal(layer.qweight, before)
    x = torch.randn(3, 256)
    torch.testing.assert_close(layer(x), x @ layer.dequantized_weight(torch.float32).T)
    # A GPU where tinygemm runs but its packer places nibbles in an order our kernels cannot read.
    monkeypatch.setattr(int_linear, "tinygemm_supports", lambda weights, dtype: True)
    monkeypatch.setattr(int_linear, "_packer_slot_permutation", lambda device: None)
    layer, before = int4_layer_after_finalize()
    assert layer.tinygemm is None and torch.equal(layer.qweight, before)
