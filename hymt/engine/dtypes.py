"""Dtype names, and their resolution to torch dtypes, in one place.

Model dtypes (`dtype=` of every local backend, `--dtype`): bfloat16 / bf16, float16 / fp16 /
half, float32 / fp32 / float, case-insensitive; None or "auto" means bfloat16 on CUDA and
float32 on CPU (bf16 matmuls on CPU are slow and only approximate the float32 reference).
KV-cache dtypes (`EngineConfig.kv_cache_dtype`): "auto" (the model dtype), bf16, fp16, fp32, fp8.

The tables hold names only and this module imports torch lazily: the CLI offers the choices
at start-up without loading torch.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from hymt.errors import EngineError, InvalidInputError

if TYPE_CHECKING:
    import torch

#: Accepted model dtype names -> the torch attribute each stands for.
DTYPE_NAMES: dict[str, str] = {
    "bfloat16": "bfloat16", "bf16": "bfloat16",
    "float16": "float16", "fp16": "float16", "half": "float16",
    "float32": "float32", "fp32": "float32", "float": "float32",
}
DTYPE_CHOICES: tuple[str, ...] = ("auto", *DTYPE_NAMES)

#: EngineConfig.kv_cache_dtype names -> torch attribute; "auto" is the model dtype.
KV_CACHE_DTYPE_NAMES: dict[str, str] = {
    "bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "fp8": "float8_e4m3fn",
}
KV_CACHE_DTYPE_CHOICES: tuple[str, ...] = ("auto", *KV_CACHE_DTYPE_NAMES)
#: Compute capability Triton's float8e4nv (the fp8 KV cache's dtype in the kernels) needs: Ada / Hopper.
FP8_KV_MIN_CAPABILITY = (8, 9)


def resolve_dtype(dtype: str | torch.dtype | None, device: torch.device) -> torch.dtype:
    """The model dtype `dtype` names on `device` (module docstring); a torch.dtype passes through."""
    import torch

    if isinstance(dtype, torch.dtype):
        return dtype
    if dtype is None or (isinstance(dtype, str) and dtype.lower() == "auto"):
        return torch.bfloat16 if device.type == "cuda" else torch.float32
    if isinstance(dtype, str) and dtype.lower() in DTYPE_NAMES:
        resolved: torch.dtype = getattr(torch, DTYPE_NAMES[dtype.lower()])
        return resolved
    raise InvalidInputError(
        f"dtype must be one of {', '.join(DTYPE_CHOICES)} or a torch.dtype, got {dtype!r}", field="dtype"
    )


def kv_cache_dtype(name: str, model_dtype: torch.dtype, device: torch.device | None = None) -> torch.dtype:
    """The paged cache's dtype for the EngineConfig name `name` ("auto" = `model_dtype`).

    "fp8" is torch.float8_e4m3fn stored WITHOUT a scale (scale 1.0): K is stored after the
    QK-norm, so its entries are O(1) (times the norm weight), and V, the projection of an
    RMS-normed hidden state, is expected to be of the same order (not yet measured on the
    real checkpoints; tools/gpu_check_model.py is where to look). e4m3 keeps 3 mantissa bits
    (relative rounding error <= 2^-4) over [2^-6, 448]; smaller magnitudes lose precision
    (subnormals down to 2^-9, below that 0) and values beyond +-448 saturate at +-448
    (kv_store.to_cache_dtype; the Triton store uses a saturating cast). A per-tensor scale
    would only be needed for activations outside that range. Half the bytes of bf16, so
    twice the KV blocks at the same budget.

    On CUDA, fp8 needs compute capability >= 8.9 (FP8_KV_MIN_CAPABILITY); older GPUs get an
    EngineError naming the values valid there. `device` None skips that check.
    """
    import torch

    if name == "auto":
        return model_dtype
    if name not in KV_CACHE_DTYPE_NAMES:
        raise InvalidInputError(f"kv_cache_dtype must be one of {KV_CACHE_DTYPE_CHOICES}, got {name!r}",
                                field="kv_cache_dtype")
    dtype: torch.dtype | None = getattr(torch, KV_CACHE_DTYPE_NAMES[name], None)
    if dtype is None:
        raise EngineError(f"kv_cache_dtype {name!r} needs a torch build with {KV_CACHE_DTYPE_NAMES[name]}")
    if name == "fp8" and device is not None:
        check_fp8_kv_device(device)
    return dtype


def check_fp8_kv_device(device: torch.device) -> None:
    """EngineError when `device` is a GPU too old for an fp8 KV cache (CPU is always fine)."""
    import torch

    if device.type != "cuda":
        return
    capability = torch.cuda.get_device_capability(device)
    if tuple(capability) >= FP8_KV_MIN_CAPABILITY:
        return
    valid = ", ".join(repr(name) for name in KV_CACHE_DTYPE_CHOICES if name != "fp8")
    need = ".".join(map(str, FP8_KV_MIN_CAPABILITY))
    raise EngineError(
        f"kv_cache_dtype 'fp8' needs a GPU of compute capability >= {need} (Ada, Hopper or newer; "
        f"Triton's float8e4nv); {device} is {capability[0]}.{capability[1]}. "
        f"Valid kv_cache_dtype values on this device: {valid}"
    )


def kv_cache_dtype_name(dtype: torch.dtype) -> str:
    """The EngineConfig name of a cache dtype ("bf16", "fp8", ...); the torch name for others."""
    import torch

    for name, attribute in KV_CACHE_DTYPE_NAMES.items():
        if getattr(torch, attribute, None) == dtype:
            return name
    return str(dtype).removeprefix("torch.")
