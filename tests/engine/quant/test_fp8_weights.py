"""FP8 (e4m3) per-row quantization: round-trip bound and range use."""
from __future__ import annotations

import torch

from hymt.engine.quant.fp8_weights import dequantize_fp8_rows, quantize_fp8_rows


def test_fp8_rows_round_trip_within_e4m3_precision():
    torch.manual_seed(0)
    x = torch.randn(32, 200) * torch.logspace(-3, 2, 32)[:, None]
    q, scale = quantize_fp8_rows(x)
    assert q.dtype == torch.float8_e4m3fn and scale.shape == (32, 1)
    d = dequantize_fp8_rows(q, scale, torch.float32)
    # e4m3 has 3 mantissa bits: relative error <= 2^-4 for normal values; values below the
    # smallest normal (2^-6 in scaled units) have an absolute error <= 2^-10 (subnormal step / 2).
    bound = torch.maximum(x.abs() * 2.0**-4, scale * 2.0**-10)
    assert torch.all((d - x).abs() <= bound * 1.0001)
    assert torch.allclose(q.float().abs().amax(dim=1), torch.full((32,), 448.0))  # e4m3's full range used


def test_zero_rows_stay_zero():
    x = torch.zeros(2, 16)
    q, scale = quantize_fp8_rows(x)
    assert torch.equal(dequantize_fp8_rows(q, scale, torch.float32), x)
