"""The int8 / int4 Triton kernels against the torch reference, run by Triton's interpreter.

fp32 activations only: Triton 3.6's interpreter gets tl.dot wrong for bf16 operands, so bf16
at real shapes is checked on the GPU (tools/gpu_check_quant.py).
"""
from __future__ import annotations

import pytest
import torch

from hymt.engine.layers import triton_available
from hymt.engine.quant.int_weights import dequantize_int, quantize_int

pytestmark = [
    pytest.mark.skipif(not triton_available(), reason="triton not installed (pip install triton==3.6.0)"),
    pytest.mark.usefixtures("triton_interpreter"),
]


def _case(n: int, k: int, bits: int, group: int, seed: int):
    torch.manual_seed(seed)
    q = quantize_int(torch.randn(n, k) * 0.1, bits, group, torch.float32)
    return q, dequantize_int(q, torch.float32)


@pytest.mark.parametrize("bits", [8, 4])
@pytest.mark.parametrize("n, k, group", [(40, 256, 128), (64, 512, 32)])
def test_gemv_matches_reference(bits, n, k, group):
    from hymt.engine.quant.triton_int_matmul import int_gemv

    q, w = _case(n, k, bits, group, seed=bits + n)
    x = torch.randn(1, k)
    out = int_gemv(x, q.qweight, q.scales, q.zeros, bits, group, block_n=16)
    torch.testing.assert_close(out, x @ w.T, rtol=1e-4, atol=1e-4)


def test_gemv_split_k_accumulates_every_split():
    from hymt.engine.quant.triton_int_matmul import gemv_split, int_gemv

    assert gemv_split(16, 1024, 16, 128) == 8  # one N block: K is split over all 8 tiles
    q, w = _case(16, 1024, 4, 128, seed=5)
    x = torch.randn(1, 1024)
    out = int_gemv(x, q.qweight, q.scales, q.zeros, 4, 128, block_n=16)
    torch.testing.assert_close(out, x @ w.T, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("bits", [8, 4])
@pytest.mark.parametrize("m", [2, 17, 40])
def test_fused_dequant_dot_matches_reference(bits, m):
    from hymt.engine.quant.triton_int_matmul import int_mm

    q, w = _case(72, 256, bits, 64, seed=m)
    x = torch.randn(m, 256)
    out = int_mm(x, q.qweight, q.scales, q.zeros, bits, 64)
    torch.testing.assert_close(out, x @ w.T, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("bits", [8, 4])
def test_dequantize_kernel_matches_reference(bits):
    from hymt.engine.quant.triton_int_matmul import int_dequantize

    q, w = _case(48, 256, bits, 128, seed=9)
    out = int_dequantize(q.qweight, q.scales, q.zeros, bits, 128, 256, torch.float32)
    assert torch.equal(out, w)


def test_dispatch_by_rows():
    from hymt.engine.quant.triton_int_matmul import FUSED_MAX_M, int_linear_triton

    q, w = _case(32, 128, 4, 64, seed=11)
    for m in (1, 3, FUSED_MAX_M + 1):
        x = torch.randn(m, 128)
        torch.testing.assert_close(int_linear_triton(x, q.qweight, q.scales, q.zeros, 4, 64), x @ w.T,
                                   rtol=1e-3, atol=1e-3)


def test_int4_dequantize_with_float16_scales():
    """int4_minus's float16 branch (bf16 has no interpreter support; the GPU check covers it):
    (q - zero) * scale rounded once to float16, as torch computes it in float32 and casts."""
    from hymt.engine.quant.triton_int_matmul import int_dequantize

    torch.manual_seed(13)
    q = quantize_int(torch.randn(48, 256) * 0.1, 4, 128, torch.float16)
    out = int_dequantize(q.qweight, q.scales, q.zeros, 4, 128, 256, torch.float16)
    assert torch.equal(out, dequantize_int(q, torch.float32).to(torch.float16))
