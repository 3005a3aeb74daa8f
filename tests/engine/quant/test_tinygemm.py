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
