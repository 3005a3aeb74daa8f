"""Quantized projections against a float reference, and apply_quantization on a model."""
from __future__ import annotations

import pytest
import torch

from hymt.engine.layers.linear import Linear
from hymt.engine.quant import Fp8Linear, IntWeightLinear, apply_quantization, quantized_linear, resolve_scheme
from hymt.engine.quant.int_weights import quantize_int


def _float_linear(n: int, k: int, seed: int = 0, bias: bool = False) -> Linear:
    torch.manual_seed(seed)
    lin = Linear(k, n, bias=bias, output_sizes=(n - 16, 16))
    lin.weight.data.normal_(0, 0.05)
    if bias:
        lin.bias.data.normal_()
    return lin


@pytest.mark.parametrize("name, max_rel", [("int8", 0.01), ("int4", 0.12), ("fp8", 0.06)])
def test_quantized_linear_is_close_to_the_float_one(name, max_rel):
    lin = _float_linear(96, 256, bias=True)
    q = quantized_linear(lin, resolve_scheme(name, "cpu"))
    x = torch.randn(5, 3, 256)
    ref = lin(x)
    out = q(x)
    assert out.shape == ref.shape == (5, 3, 96)
    assert ((out - ref).norm() / ref.norm()) < max_rel
    assert q.output_sizes == (80, 16)


def test_int_linear_equals_float_linear_on_its_dequantized_weight():
    lin = _float_linear(64, 128)
    q = quantized_linear(lin, resolve_scheme("int4", "cpu"))
    exact = Linear(128, 64)
    exact.weight.data.copy_(q.dequantized_weight(torch.float32))
    x = torch.randn(7, 128)
    torch.testing.assert_close(q(x), exact(x), rtol=1e-6, atol=1e-6)


def test_rows_written_part_by_part_equal_whole_quantization():
    torch.manual_seed(3)
    w = torch.randn(48, 64)
    whole = IntWeightLinear(64, 48, resolve_scheme("int4", "cpu"), output_sizes=(32, 16), dtype=torch.float32)
    parts = IntWeightLinear(64, 48, resolve_scheme("int4", "cpu"), output_sizes=(32, 16), dtype=torch.float32)
    whole.load_float_rows(0, w)
    parts.load_float_rows(32, w[32:])
    parts.load_float_rows(0, w[:32])
    assert torch.equal(whole.qweight, parts.qweight) and torch.equal(whole.scales, parts.scales)


def test_quantized_rows_with_another_format_are_refused():
    layer = IntWeightLinear(128, 8, resolve_scheme("int8", "cpu"), dtype=torch.float32)
    with pytest.raises(ValueError, match="layer is 8-bit / group 128"):
        layer.load_quantized_rows(0, quantize_int(torch.randn(8, 128), 8, 64))


def test_fp8_linear_takes_per_tensor_scales():
    layer = Fp8Linear(32, 8, dtype=torch.float32)
    q = (torch.randn(8, 32) * 100).clamp(-448, 448).to(torch.float8_e4m3fn)
    layer.load_quantized_rows(0, q, torch.tensor([0.5]))
    assert torch.equal(layer.weight_scale, torch.full((8,), 0.5))
    torch.testing.assert_close(layer.dequantized_weight(torch.float32), q.float() * 0.5)


def test_small_widths_use_the_largest_dividing_group():
    layer = IntWeightLinear(96, 8, resolve_scheme("int4", "cpu"), dtype=torch.float32)
    assert layer.group_size == 32 and layer.scales.shape == (8, 3)


def test_apply_quantization_replaces_decoder_projections_only(tiny_config):
    from hymt.engine.loader import load_model

    model = load_model(dict(tiny_config), "cpu", random_weights=True)
    float_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    apply_quantization(model, "int8")
    for layer in model.layers:
        assert isinstance(layer.self_attn.qkv_proj, IntWeightLinear)
        assert isinstance(layer.mlp.down_proj, IntWeightLinear)
    assert isinstance(model.lm_head, Linear)
    assert sum(p.numel() * p.element_size() for p in model.parameters()) < float_bytes
