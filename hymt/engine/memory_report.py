"""MemoryReport: where the native engine's device memory went, as the log and `hymt bench` print it.

Plain numbers, no torch: an engine process sends it to the server, which imports no torch for it.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

GB = 1e9  # memory figures are in GB of 1e9 bytes, as budgets are given


@dataclass(frozen=True)
class MemoryReport:
    """Where the engine's device memory goes; `hymt bench` and the server log print it.

    Attributes:
        device: "cuda:0", "cpu", ...
        budget_bytes: the budget the KV cache was sized from (None on CPU or with num_kv_blocks).
        device_total_bytes: the device's memory (0 on CPU).
        weights_bytes: model weights as loaded (after quantization).
        kv_cache_bytes / num_kv_blocks / kv_block_bytes / block_size: the paged cache.
        kv_cache_dtype: the cache's element type, as EngineConfig names it ("bf16", "fp8", ...).
        activation_bytes: peak extra memory of a max_num_batched_tokens forward + sampling.
        cuda_graph_bytes: memory held by the captured CUDA graphs, decode and step (0 when eager).
        cuda_graph_planned_bytes: what the KV sizing set aside for them (measured on the
            largest bucket before the cache existed).
        sampler_bytes: the sampler's per-sequence penalty table.
        peak_bytes: the most the caching allocator has held since the engine started.
    """

    device: str
    budget_bytes: int | None
    device_total_bytes: int
    weights_bytes: int
    kv_cache_bytes: int
    num_kv_blocks: int
    kv_block_bytes: int
    block_size: int
    activation_bytes: int
    cuda_graph_bytes: int
    cuda_graph_planned_bytes: int
    sampler_bytes: int
    peak_bytes: int
    kv_cache_dtype: str

    @property
    def kv_tokens(self) -> int:
        return self.num_kv_blocks * self.block_size

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "kv_tokens": self.kv_tokens}

    def format(self) -> str:
        def gb(x: int | None) -> str:
            return "-" if x is None else f"{x / GB:.2f} GB"

        return (
            f"memory on {self.device}: budget {gb(self.budget_bytes)}, weights {gb(self.weights_bytes)}, "
            f"KV {self.kv_cache_dtype} {gb(self.kv_cache_bytes)} ({self.num_kv_blocks} blocks x "
            f"{self.block_size} tokens = {self.kv_tokens} tokens), activations {gb(self.activation_bytes)}, "
            f"CUDA graphs {gb(self.cuda_graph_bytes)} (planned {gb(self.cuda_graph_planned_bytes)}), "
            f"sampler {gb(self.sampler_bytes)}, "
            f"peak {gb(self.peak_bytes)}"
        )
