"""EngineConfig: every knob of the native engine, validated once at construction."""
from __future__ import annotations

from dataclasses import dataclass

from hymt.engine.dtypes import KV_CACHE_DTYPE_CHOICES
from hymt.errors import InvalidInputError

QUANTIZATION_CHOICES = (None, "int8", "int4", "int4-triton", "fp8")

__all__ = ["KV_CACHE_DTYPE_CHOICES", "QUANTIZATION_CHOICES", "EngineConfig"]


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
        enable_prefix_caching: share full KV blocks between prompts with the same prefix.
        quantization: weight quantization applied at load: None, "int8", "int4", "int4-triton" or "fp8".
        kv_cache_dtype: "auto" (the model dtype) or an explicit dtype.
        seed: seed of the engine's default generator (requests may carry their own).
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
    enable_prefix_caching: bool = True
    quantization: str | None = None
    kv_cache_dtype: str = "auto"
    seed: int = 0

    def __post_init__(self) -> None:
        _positive("max_num_seqs", self.max_num_seqs)
        _positive("max_num_batched_tokens", self.max_num_batched_tokens)
        _positive("max_model_len", self.max_model_len)
        _positive("block_size", self.block_size)
        _positive("cuda_graph_max_bs", self.cuda_graph_max_bs)
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
        if self.max_num_batched_tokens < self.max_num_seqs:
            raise InvalidInputError(
                "max_num_batched_tokens must be >= max_num_seqs so every running sequence can "
                f"decode in one step (got {self.max_num_batched_tokens} < {self.max_num_seqs})",
                field="max_num_batched_tokens",
            )


def _positive(name: str, value: int) -> None:
    if not isinstance(value, int) or value < 1:
        raise InvalidInputError(f"{name} must be a positive integer, got {value!r}", field=name)
