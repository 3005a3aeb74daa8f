"""Which quantized projection a scheme uses, and converting a float model after the fact."""
from __future__ import annotations

import functools

import torch
from torch import nn

from hymt.engine.layers.linear import Linear
from hymt.engine.quant.fp8_linear import Fp8Linear
from hymt.engine.quant.int_linear import IntWeightLinear
from hymt.engine.quant.schemes import QuantScheme, resolve_scheme

QUANTIZED_LINEARS = (IntWeightLinear, Fp8Linear)


def linear_factory(scheme: QuantScheme):
    """A LinearFactory (hymt.engine.network.hunyuan_dense) building `scheme`'s projections."""
    cls = Fp8Linear if scheme.is_fp8 else IntWeightLinear
    return functools.partial(cls, scheme=scheme)


def quantized_linear(linear: Linear, scheme: QuantScheme) -> nn.Module:
    """A quantized copy of a loaded float Linear (same device, same bias)."""
    weight = linear.weight.data
    module = linear_factory(scheme)(
        linear.in_features, linear.out_features, bias=linear.bias is not None,
        output_sizes=linear.output_sizes, device=weight.device, dtype=weight.dtype,
    )
    module.load_float_rows(0, weight)
    if linear.bias is not None:
        module.bias.data.copy_(linear.bias.data)
    return module


@torch.no_grad()
def apply_quantization(model: nn.Module, scheme: str | QuantScheme) -> nn.Module:
    """Replace every decoder projection of a loaded float model with a quantized one, in place.

    The LM head (and so the tied embedding) stays in the model dtype. Each float weight is
    freed as soon as its quantized copy exists, so the peak is the float model plus one layer.
    """
    if isinstance(scheme, str):
        scheme = resolve_scheme(scheme, next(model.parameters()).device)
    for layer in model.layers:
        for parent, name in ((layer.self_attn, "qkv_proj"), (layer.self_attn, "o_proj"),
                             (layer.mlp, "gate_up_proj"), (layer.mlp, "down_proj")):
            linear = getattr(parent, name)
            if isinstance(linear, Linear):
                setattr(parent, name, quantized_linear(linear, scheme))
    return finalize_layers(model)


@torch.no_grad()
def finalize_layers(model: nn.Module) -> nn.Module:
    """Let each quantized projection repack its loaded weight for the device's kernels."""
    for module in model.modules():
        if isinstance(module, IntWeightLinear):
            module.finalize()
    return model
