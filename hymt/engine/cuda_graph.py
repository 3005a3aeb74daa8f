"""CUDA graphs for decode-only steps at bucketed batch sizes.

A decode step of a 1.8B model is 1-8 ms of GPU work made of ~400 kernels; launching them from
Python costs as much as running them below batch ~256 (docs/reference/engine.md §3.1: graphs pay
1.4-2.1x at M <= 128). Each bucket's graph replays embedding -> 32 layers -> norm -> LM head
(logits in an fp32 buffer) reading the runner's persistent input buffers. Graphs are captured
largest first into one shared memory pool, so the smaller ones reuse the largest one's
activations. A batch runs in the smallest bucket >= its size, padded with inert rows.
"""
from __future__ import annotations

import bisect
import logging
from collections.abc import Callable

import torch

log = logging.getLogger(__name__)


def graph_buckets(max_bs: int) -> list[int]:
    """Batch sizes to capture: 1, 2, 4, then every 8 to 256, every 16 to 512, every 32 beyond.

    Padding costs at most 20 % of a bucket from 40 up (6 % past 512), where it matters
    least (the step is compute-bound there); the list always ends at `max_bs`.
    """
    if max_bs < 1:
        return []
    sizes = [1, 2, 4] + list(range(8, 257, 8)) + list(range(272, 513, 16)) + list(range(544, max_bs + 1, 32))
    out = [s for s in sizes if s <= max_bs]
    if out[-1] != max_bs:
        out.append(max_bs)
    return out


def bucket_for(n: int, buckets: list[int]) -> int | None:
    """Smallest bucket >= n, or None when n exceeds the largest (eager fallback)."""
    i = bisect.bisect_left(buckets, n)
    return buckets[i] if i < len(buckets) else None


class DecodeGraphs:
    """Captured decode graphs, one per bucket, sharing one memory pool."""

    def __init__(self) -> None:
        self.buckets: list[int] = []
        self._graphs: dict[int, torch.cuda.CUDAGraph] = {}
        self._outputs: dict[int, torch.Tensor] = {}
        self.pool_bytes = 0

    def __len__(self) -> int:
        return len(self._graphs)

    def capture(
        self,
        buckets: list[int],
        prepare: Callable[[int], None],
        run: Callable[[int], torch.Tensor],
    ) -> None:
        """Capture `run(bs)` for each bucket, largest first.

        prepare(bs): fill the persistent inputs with an inert batch of bs rows.
        run(bs): the forward over those buffers; returns logits [bs, vocab] float32.
        """
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        before = torch.cuda.memory_reserved()
        pool = torch.cuda.graph_pool_handle()
        for bs in sorted(buckets, reverse=True):
            prepare(bs)
            # Warm up outside the graph (Triton compiles, cuBLAS picks kernels) on the current
            # stream: its blocks go back to the cache eager steps use, which the activation
            # budget covers. A side stream per warm-up left each one's blocks reserved for a
            # stream nothing used again.
            run(bs)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, pool=pool):
                out = run(bs)
            self._graphs[bs] = graph
            self._outputs[bs] = out
        torch.cuda.synchronize()
        torch.cuda.empty_cache()  # so pool_bytes counts the graphs' pool, not cached warm-up blocks
        self.buckets = sorted(self._graphs)
        self.pool_bytes = max(0, torch.cuda.memory_reserved() - before)
        log.info("captured %d decode CUDA graphs (batch %d..%d), pool %.1f MB",
                 len(self._graphs), self.buckets[0], self.buckets[-1], self.pool_bytes / 1e6)

    def bucket_for(self, n: int) -> int | None:
        return bucket_for(n, self.buckets)

    def replay(self, bs: int) -> torch.Tensor:
        """Run the graph of bucket `bs`; returns its logits buffer [bs, vocab] (valid until the next replay)."""
        self._graphs[bs].replay()
        return self._outputs[bs]

    def reset(self) -> None:
        self._graphs.clear()
        self._outputs.clear()
        self.buckets = []
