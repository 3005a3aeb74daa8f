"""Round-trip error bounds of the group-wise int8 / int4 formats."""
from __future__ import annotations

import pytest
import torch

from hymt.engine.quant.int_weights import dequantize_int, pack_int4, quantize_int, unpack_int4


def _groups(t: torch.Tensor, group: int) -> torch.Tensor:
    return t.reshape(t.shape[0], -1, group)  # [N, groups, G]


@pytest.mark.parametrize("group", [32, 128])
def test_int8_round_trip_within_half_a_step(group):
    torch.manual_seed(0)
    w = torch.randn(48, 256) * torch.rand(48, 1) * 3
    q = quantize_int(w, 8, group, torch.float32)
    err = (dequantize_int(q, torch.float32) - w).abs()
    step = q.scales[..., None]  # one int8 step of each group
    assert torch.all(_groups(err, group) <= step / 2 + 1e-6)
    assert q.qweight.dtype == torch.int8 and q.zeros is None
    assert ((dequantize_int(q, torch.float32) - w).norm() / w.norm()) < 0.01


@pytest.mark.parametrize("group", [32, 128])
def test_int4_round_trip_within_half_a_step(group):
    torch.manual_seed(1)
    w = torch.randn(40, 256) + 0.3  # off-centre groups use the zero point
    q = quantize_int(w, 4, group, torch.float32)
    err = (dequantize_int(q, torch.float32) - w).abs()
    assert torch.all(_groups(err, group) <= q.scales[..., None] / 2 + 1e-6)
    assert q.qweight.shape == (40, 128) and q.qweight.dtype == torch.uint8
    assert torch.all((q.zeros >= 0) & (q.zeros <= 15)) and torch.equal(q.zeros, q.zeros.round())
    assert ((dequantize_int(q, torch.float32) - w).norm() / w.norm()) < 0.12


def test_int4_keeps_zero_weights_exact_and_all_zero_groups_finite():
    w = torch.randn(4, 64)
    w[0] = 0.0
    w[1, :10] = 0.0
    d = dequantize_int(quantize_int(w, 4, 32, torch.float32), torch.float32)
    assert torch.all(torch.isfinite(d))
    assert torch.equal(d[0], torch.zeros(64)) and torch.equal(d[1, :10], torch.zeros(10))


def test_bf16_scales_round_trip_bound_uses_stored_scale():
    torch.manual_seed(2)
    w = torch.randn(16, 128)
    q = quantize_int(w, 8, 64, torch.bfloat16)
    assert q.scales.dtype == torch.bfloat16
    err = (dequantize_int(q, torch.float32) - w).abs()
    assert torch.all(_groups(err, 64) <= q.scales.float()[..., None] / 2 + 1e-6)


def test_pack_unpack_int4_is_lossless_and_low_nibble_first():
    q = torch.randint(0, 16, (7, 64), dtype=torch.uint8)
    packed = pack_int4(q)
    assert packed.shape == (7, 32)
    assert torch.equal(unpack_int4(packed), q)
    assert int(packed[0, 0]) == int(q[0, 0]) | (int(q[0, 1]) << 4)


def test_bad_shapes_are_refused():
    with pytest.raises(ValueError, match="multiple of group_size"):
        quantize_int(torch.randn(4, 48), 8, 32)
    with pytest.raises(ValueError, match="bits must be 8 or 4"):
        quantize_int(torch.randn(4, 64), 3, 32)
