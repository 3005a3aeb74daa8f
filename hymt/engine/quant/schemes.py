"""Weight quantization schemes of the native engine and where each one runs.

int8 / int4: weight-only, group-wise scales along the input dimension (int4 also carries an
integer zero point per group, so GPTQ checkpoints map onto it); activations stay in the model
dtype. They run on any CUDA GPU and on CPU (dequantize + matmul, the reference). On CUDA sm80+
in bf16, int4 is repacked for torch's own int4 kernel ("tinygemm") for a few rows, with our
Triton kernels reading the same words for more (int_linear.py); wherever tinygemm does not
run (other GPUs or dtypes, a packer placement our kernels cannot read, CPU), int4 keeps our
packed layout and its Triton kernels (or, on CPU, the reference), without being asked.
fp8: e4m3 weights with one scale per output channel and activations quantized per token at
run time, multiplied by `torch._scaled_mm`; it needs Hopper-class GPUs (compute capability
9.0+, row-wise scaled FP8 GEMMs). On CPU it runs as an exact emulation (the reference path).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import torch

from hymt.errors import InvalidInputError

#: Input columns sharing one scale by default (GPTQ's and the HY-MT1.5 GPTQ release's choice).
DEFAULT_GROUP_SIZE = 128
#: Smallest compute capability with row-wise scaled FP8 GEMMs in torch._scaled_mm.
FP8_MIN_CAPABILITY = (9, 0)


@dataclass(frozen=True)
class QuantScheme:
    """One weight quantization scheme.

    Attributes:
        name: "int8", "int4" or "fp8" (EngineConfig.quantization).
        bits: bits per stored weight.
        group_size: input columns sharing a scale (int schemes); 0 means one scale per output
            row (fp8).
        has_zero_point: whether groups carry an integer zero point (asymmetric int4).
        kernel: "tinygemm" (int4: repacked for torch's tinygemm kernel where it runs, our
            layout elsewhere) or "triton" (always our packed layout and Triton kernels; tests
            and tools compare the two layouts with it).
    """

    name: str
    bits: int
    group_size: int
    has_zero_point: bool
    kernel: str = "triton"

    @property
    def is_fp8(self) -> bool:
        return self.name == "fp8"

    def bytes_per_weight(self) -> float:
        """Storage per weight including scales (and zero points) in a 2-byte dtype."""
        per_group = (2 if self.has_zero_point else 1) * 2 / self.group_size if self.group_size else 0.0
        return self.bits / 8 + per_group


SCHEMES: dict[str, QuantScheme] = {
    "int8": QuantScheme("int8", 8, DEFAULT_GROUP_SIZE, has_zero_point=False),
    "int4": QuantScheme("int4", 4, DEFAULT_GROUP_SIZE, has_zero_point=True, kernel="tinygemm"),
    "fp8": QuantScheme("fp8", 8, 0, has_zero_point=False),
}


def supported_schemes(device) -> tuple[str, ...]:
    """Scheme names that run on `device` ("cpu", "cuda", "cuda:1", torch.device)."""
    device = torch.device(device)
    if device.type != "cuda":
        return tuple(SCHEMES)  # reference paths
    index = device.index if device.index is not None else torch.cuda.current_device()
    if torch.cuda.get_device_capability(index) >= FP8_MIN_CAPABILITY:
        return tuple(SCHEMES)
    return tuple(name for name in SCHEMES if name != "fp8")


def resolve_scheme(name, device, *, group_size: int | None = None) -> QuantScheme:
    """The scheme called `name`, checked against what `device` supports.

    Raises InvalidInputError naming the supported schemes of this device.
    """
    valid = supported_schemes(device)
    if not isinstance(name, str) or name.lower() not in SCHEMES:
        raise InvalidInputError(
            f"quantization {name!r} is not supported; valid on {torch.device(device)}: None, {', '.join(valid)}",
            field="quantization",
        )
    scheme = SCHEMES[name.lower()]
    if scheme.name not in valid:
        cap = ".".join(map(str, FP8_MIN_CAPABILITY))
        raise InvalidInputError(
            f"quantization 'fp8' needs a GPU of compute capability {cap}+ (Hopper); valid on "
            f"{torch.device(device)}: None, {', '.join(valid)}",
            field="quantization",
        )
    if group_size is not None and not scheme.is_fp8:
        if group_size < 16 or group_size & (group_size - 1):
            raise InvalidInputError(f"group_size must be a power of two >= 16, got {group_size}", field="group_size")
        scheme = replace(scheme, group_size=group_size)
    return scheme


def effective_group_size(in_features: int, group_size: int) -> int:
    """`group_size`, or the largest power of two >= 16 below it dividing `in_features`.

    Tiny test models have widths under 128; real Hunyuan widths (2048, 4096, 6144, 14336)
    are all multiples of 128. A width with no such divisor is one group.
    """
    g = group_size
    while g >= 16:
        if in_features % g == 0:
            return g
        g //= 2
    return in_features
