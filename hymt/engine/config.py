"""EngineConfig: every knob of the native engine, validated once at construction.

Three fields can also be set from the environment, for debugging a deployed server without
changing its command line, and for A/B runs of `hymt bench`; `with_env_overrides` is the one
place that reads them:

    HYMT_OVERLAP=0 | 1          overlap = False | True
    HYMT_PROFILE=1 | cpu | 0    step_profile = "sync" | "cpu" | "off" (also "off", "false", "")
    HYMT_DISABLE_TRITON=1 | 0   disable_triton = True | False
"""
from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from hymt.engine.dtypes import KV_CACHE_DTYPE_CHOICES
from hymt.errors import InvalidInputError

#: The names of quant.schemes.SCHEMES, here without importing torch.
QUANTIZATION_CHOICES = (None, "int8", "int4", "fp8")
STEP_PROFILE_CHOICES = ("off", "sync", "cpu")

__all__ = ["KV_CACHE_DTYPE_CHOICES", "QUANTIZATION_CHOICES", "STEP_PROFILE_CHOICES", "EngineConfig",
           "check_backend_config", "env_overrides_set", "with_env_overrides"]

#: Fields every backend's translator reads (the prompt budget); the others are the native engine's.
_SHARED_FIELDS = frozenset({"max_model_len"})


@dataclass(frozen=True)
class EngineConfig:
    """Configuration of the native engine. Field names follow vLLM where they mean the same.

    Attributes:
        max_num_seqs: most sequences in one step's batch (decode batch size cap).
        max_num_batched_tokens: token budget of one step (prefill + decode tokens together).
        max_model_len: longest prompt + answer a sequence may reach; never sized from the
            checkpoint's 262,144 positions.
        block_size: tokens per paged-KV block. Small blocks keep prefix sharing useful for
            40-token prompts.
        gpu_memory_utilization: fraction of the device's total memory the engine may use,
            used when `gpu_memory_gb` is None.
        gpu_memory_gb: absolute budget in GB (1e9 bytes) for weights + activations + graphs +
            KV cache; overrides `gpu_memory_utilization`.
        num_kv_blocks: fix the number of KV blocks directly (tests, tiny budgets); None sizes
            the cache from the memory budget.
        enforce_eager: never capture CUDA graphs.
        cuda_graph_max_bs: largest decode batch captured in a CUDA graph.
        cuda_graph_max_tokens: largest step with prefill tokens captured in a CUDA graph (token
            buckets of cuda_graph.token_graph_buckets, up to max_num_batched_tokens and
            max_model_len); 0: such steps run eagerly.
        enable_prefix_caching: share full KV blocks between prompts with the same prefix.
        quantization: weight quantization applied at load: None, "int8", "int4" or "fp8".
        kv_cache_dtype: "auto" (the model dtype) or an explicit dtype.
        seed: seed of the engine's default generator (requests may carry their own).
        overlap: launch step n before reading step n-1's sampled ids, so the host plans while
            the device computes (native_engine.py). None: on for CUDA, off on CPU, where
            nothing runs asynchronously. Timing changes; tokens never do.
        step_profile: time each phase of every step (step_timer.py) and log a summary every
            100 steps: "off"; "sync" (a device sync ends each phase, so GPU time lands in the
            phase that launched it; serialises host and device); "cpu" (host time only).
        disable_triton: run the torch kernels on CUDA instead of Triton's (debugging,
            comparisons). Process-wide while the engine is open: layers choose per tensor.
    """

    max_num_seqs: int = 512
    max_num_batched_tokens: int = 16384
    max_model_len: int = 4096
    block_size: int = 16
    gpu_memory_utilization: float = 0.9
    gpu_memory_gb: float | None = None
    num_kv_blocks: int | None = None
    enforce_eager: bool = False
    cuda_graph_max_bs: int = 512
    cuda_graph_max_tokens: int = 2048
    enable_prefix_caching: bool = True
    quantization: str | None = None
    kv_cache_dtype: str = "auto"
    seed: int = 0
    overlap: bool | None = None
    step_profile: str = "off"
    disable_triton: bool = False

    def __post_init__(self) -> None:
        _positive("max_num_seqs", self.max_num_seqs)
        _positive("max_num_batched_tokens", self.max_num_batched_tokens)
        _positive("max_model_len", self.max_model_len)
        _positive("block_size", self.block_size)
        _positive("cuda_graph_max_bs", self.cuda_graph_max_bs)
        if not isinstance(self.cuda_graph_max_tokens, int) or self.cuda_graph_max_tokens < 0:
            raise InvalidInputError(
                f"cuda_graph_max_tokens must be an integer >= 0, got {self.cuda_graph_max_tokens!r}",
                field="cuda_graph_max_tokens",
            )
        if not 0.0 < self.gpu_memory_utilization <= 1.0:
            raise InvalidInputError(
                f"gpu_memory_utilization must be in (0, 1], got {self.gpu_memory_utilization}",
                field="gpu_memory_utilization",
            )
        if self.gpu_memory_gb is not None and self.gpu_memory_gb <= 0:
            raise InvalidInputError(f"gpu_memory_gb must be > 0, got {self.gpu_memory_gb}", field="gpu_memory_gb")
        if self.num_kv_blocks is not None and self.num_kv_blocks < 1:
            raise InvalidInputError(f"num_kv_blocks must be >= 1, got {self.num_kv_blocks}", field="num_kv_blocks")
        if self.quantization not in QUANTIZATION_CHOICES:
            raise InvalidInputError(
                f"quantization must be one of {QUANTIZATION_CHOICES}, got {self.quantization!r}",
                field="quantization",
            )
        if self.kv_cache_dtype not in KV_CACHE_DTYPE_CHOICES:
            raise InvalidInputError(
                f"kv_cache_dtype must be one of {KV_CACHE_DTYPE_CHOICES}, got {self.kv_cache_dtype!r}",
                field="kv_cache_dtype",
            )
        if self.overlap is not None and not isinstance(self.overlap, bool):
            raise InvalidInputError(f"overlap must be True, False or None (auto), got {self.overlap!r}",
                                    field="overlap")
        if self.step_profile not in STEP_PROFILE_CHOICES:
            raise InvalidInputError(
                f"step_profile must be one of {STEP_PROFILE_CHOICES}, got {self.step_profile!r}", field="step_profile"
            )
        if not isinstance(self.disable_triton, bool):
            raise InvalidInputError(f"disable_triton must be True or False, got {self.disable_triton!r}",
                                    field="disable_triton")
        if self.max_num_batched_tokens < self.max_num_seqs:
            raise InvalidInputError(
                "max_num_batched_tokens must be >= max_num_seqs so every running sequence can "
                f"decode in one step (got {self.max_num_batched_tokens} < {self.max_num_seqs})",
                field="max_num_batched_tokens",
            )


def _profile_mode(value: str) -> str:
    value = value.strip().lower()
    return "off" if value in ("", "0", "false", "off") else "cpu" if value == "cpu" else "sync"


#: variable -> (EngineConfig field, its value from the variable's text); module docstring.
#: The values are of each field's own type, hence Any.
_ENV_FIELDS: dict[str, tuple[str, Callable[[str], Any]]] = {
    "HYMT_OVERLAP": ("overlap", lambda value: value.strip() != "0"),
    "HYMT_PROFILE": ("step_profile", _profile_mode),
    "HYMT_DISABLE_TRITON": ("disable_triton", lambda value: value.strip() == "1"),
}


def env_overrides_set(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables with_env_overrides reads that are set, with their text (for a benchmark's
    record of its command)."""
    env = os.environ if environ is None else environ
    return {name: env[name] for name in _ENV_FIELDS if name in env}


def with_env_overrides(config: EngineConfig, environ: Mapping[str, str] | None = None) -> EngineConfig:
    """`config` with the fields the environment sets (module docstring); unset variables change nothing."""
    changes: dict[str, Any] = {}
    for name, text in env_overrides_set(environ).items():
        field_name, parse = _ENV_FIELDS[name]
        if getattr(config, field_name) != (value := parse(text)):
            changes[field_name] = value
    return replace(config, **changes) if changes else config


def _positive(name: str, value: int) -> None:
    if not isinstance(value, int) or value < 1:
        raise InvalidInputError(f"{name} must be a positive integer, got {value!r}", field=name)


def check_backend_config(backend: str, config: EngineConfig) -> None:
    """Refuse native-engine settings for another backend, which would ignore them unsaid."""
    if backend == "native":
        return
    defaults = EngineConfig()
    for f in fields(EngineConfig):
        if f.name not in _SHARED_FIELDS and getattr(config, f.name) != getattr(defaults, f.name):
            raise InvalidInputError(
                f"{f.name} is a setting of the native engine; the {backend} engine does not take it "
                "(leave it unset, or use the native engine)", field=f.name)
