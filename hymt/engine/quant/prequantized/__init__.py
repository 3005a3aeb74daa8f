"""Pre-quantized checkpoints, loaded as published: GPTQ int4 and compressed-tensors fp8.

`detect_prequantized(config)` reads config.json's `quantization_config` and returns the
format (or None for a float checkpoint); `format.handler(model)` gives the loader a
WeightHandler (hymt.engine.loader) that takes the projections' packed tensors.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hymt.engine.quant.schemes import QuantScheme
from hymt.errors import ModelLoadError


@dataclass(frozen=True)
class PrequantizedFormat:
    """A checkpoint's quantization format.

    Attributes:
        name: "gptq" or "compressed-tensors".
        scheme: the scheme the native model is built with (its group size is the checkpoint's).
        handler: model -> WeightHandler for load_weights.
    """

    name: str
    scheme: QuantScheme
    handler: Callable


def detect_prequantized(config: dict) -> PrequantizedFormat | None:
    """The format named by config["quantization_config"]; ModelLoadError for unsupported ones."""
    qc = config.get("quantization_config")
    if not qc:
        return None
    method = str(qc.get("quant_method", "")).lower()
    if method == "gptq":
        from hymt.engine.quant.prequantized.gptq import gptq_format

        return gptq_format(qc)
    if method in ("compressed-tensors", "compressed_tensors", "fp8"):
        from hymt.engine.quant.prequantized.compressed_tensors import compressed_tensors_format

        return compressed_tensors_format(qc)
    raise ModelLoadError(
        f"quantization_config.quant_method {method!r} is not supported; valid: 'gptq' (4-bit), "
        "'compressed-tensors' (fp8)"
    )


def projection_parts(model) -> dict:
    """HF module name ("model.layers.0.self_attn.k_proj") -> the rows of the quantized
    projection it fills (a hunyuan_weights.QuantizedRowsTarget: module, start, stop)."""
    from hymt.engine.network.hunyuan_weights import QuantizedRowsTarget, weight_targets

    return {
        name.removesuffix(".weight"): target
        for name, target in weight_targets(model, quantized_weights=True).items()
        if isinstance(target, QuantizedRowsTarget)
    }
