"""Memory one scheme used: from loading the model to the end of its pass.

On CUDA: `torch.cuda.max_memory_allocated` with the peak reset before the model loads. The
native engine sizes its KV cache to the memory budget, so this peak includes that reserve;
the engine's own weights figure is reported beside it.
On CPU: the growth of the process's resident set (psutil) over the RSS before loading,
sampled after loading and after each chunk; "n/a" without psutil. Freed memory is not always
returned to the system, so a later scheme can read low.
"""
from __future__ import annotations

import gc
from dataclasses import asdict, dataclass
from typing import Literal

import torch

MemoryKind = Literal["cuda_max_allocated", "cpu_rss_growth", "n/a"]
MEMORY_KIND_TEXT = {
    "cuda_max_allocated": "torch.cuda.max_memory_allocated over load + run (the KV cache reserve included)",
    "cpu_rss_growth": "growth of the process RSS over load + run (psutil)",
    "n/a": "not measured",
}


@dataclass(frozen=True)
class MemoryUse:
    """Memory of one scheme.

    Attributes:
        kind: what `peak_bytes` measures (MEMORY_KIND_TEXT).
        peak_bytes: None when not measured (kind "n/a", or every chunk came from the work file).
        weights_bytes: the engine's weights as loaded, when the engine reports them.
    """

    kind: MemoryKind
    peak_bytes: int | None = None
    weights_bytes: int | None = None

    def to_dict(self) -> dict[str, object]:
        return {**asdict(self), "what": MEMORY_KIND_TEXT[self.kind]}


class MemoryProbe:
    """Measures one scheme's memory on `device` (None: a remote engine, nothing to measure)."""

    def __init__(self, device: torch.device | None) -> None:
        self.device = device
        self._base = 0
        self._peak = 0
        self._process = None
        if device is not None and device.type == "cpu":
            try:
                import psutil
            except ImportError:
                psutil = None
            self._process = psutil.Process() if psutil is not None else None

    @property
    def kind(self) -> MemoryKind:
        if self.device is not None and self.device.type == "cuda":
            return "cuda_max_allocated"
        return "cpu_rss_growth" if self._process is not None else "n/a"

    def start(self) -> None:
        """Before the model loads: free what the previous scheme left, reset the peak."""
        gc.collect()
        if self.kind == "cuda_max_allocated":
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats(self.device)
        elif self._process is not None:
            self._base = self._peak = self._process.memory_info().rss

    def sample(self) -> None:
        """After loading and after each chunk (the CPU measure reads the RSS at these points)."""
        if self._process is not None:
            self._peak = max(self._peak, self._process.memory_info().rss)

    def finish(self, weights_bytes: int | None) -> MemoryUse:
        """The scheme's figures (call before the model is closed)."""
        if self.kind == "cuda_max_allocated":
            return MemoryUse(self.kind, int(torch.cuda.max_memory_allocated(self.device)), weights_bytes)
        if self.kind == "cpu_rss_growth":
            self.sample()
            return MemoryUse(self.kind, self._peak - self._base, weights_bytes)
        return MemoryUse("n/a", None, weights_bytes)
