"""Weight quantization of the native engine: int8 / int4 weight-only and fp8 (see schemes.py).

`load_model(..., quantization=...)` builds the model with quantized projections from the
start (hymt.engine.loader), so float weights never occupy the device in full;
`apply_quantization` converts a model that is already loaded. Pre-quantized checkpoints
(GPTQ int4, compressed-tensors fp8) load through hymt.engine.quant.prequantized.
"""
from hymt.engine.quant.fp8_linear import Fp8Linear
from hymt.engine.quant.int_linear import IntWeightLinear
from hymt.engine.quant.layers import (
    QUANTIZED_LINEARS,
    apply_quantization,
    finalize_layers,
    linear_factory,
    quantized_linear,
)
from hymt.engine.quant.schemes import SCHEMES, QuantScheme, resolve_scheme, supported_schemes

__all__ = [
    "Fp8Linear", "IntWeightLinear", "QUANTIZED_LINEARS", "QuantScheme", "SCHEMES", "apply_quantization",
    "finalize_layers",
    "linear_factory", "quantized_linear", "resolve_scheme", "supported_schemes",
]
