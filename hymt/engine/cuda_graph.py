"""CUDA graphs of whole model steps, at bucketed sizes.

A step of a 1.8B model is 1-8 ms of GPU work made of ~400 kernels; launching them from
Python costs as much as running them below batch ~256 (docs/reference/engine.md §3.1: graphs pay
1.4-2.1x at M <= 128), and an eager prefill of a few hundred tokens is bound by those launches
alone. Two sets of graphs share one memory pool, so each graph reuses the largest one's
activations:
- decode graphs, by batch size (`graph_buckets`): embedding -> layers -> norm -> LM head
  (logits in an fp32 buffer), for decode-only steps; a batch runs in the smallest bucket >= its
  size, padded with inert rows;
- step graphs, by token count (`token_graph_buckets`): embedding -> layers -> norm, for any
  other step (prefills, prefill chunks beside decode rows) of up to the largest bucket's
  tokens, padded with one inert sequence; the LM head then runs eagerly on the sampled rows.
Graphs are captured largest first.
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


def token_graph_buckets(max_tokens: int) -> list[int]:
    """Token counts to capture: 16, 32, 64, 96, 128, then steps of a quarter to a third up to
    `max_tokens` (padding costs at most a third of a bucket's compute, where a step of a few
    hundred tokens is still bound by launches rather than compute)."""
    sizes = [16, 32, 64, 96, 128, 192, 256, 384, 512, 640, 768, 1024, 1280, 1536, 2048, 2560, 3072, 4096]
    out = [s for s in sizes if s <= max_tokens]
    if out and out[-1] != max_tokens and max_tokens <= sizes[-1]:
        out.append(max_tokens)
    return out


def bucket_for(n: int, buckets: list[int]) -> int | None:
    """Smallest bucket >= n, or None when n exceeds the largest (eager fallback)."""
    i = bisect.bisect_left(buckets, n)
    return buckets[i] if i < len(buckets) else None


class StepGraphs:
    """Captured graphs of one kind, one per bucket, in a memory pool they may share with others."""

    def __init__(self, kind: str) -> None:
        self.kind = kind  # "decode" or "step", for the log
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
        pool: tuple[int, int] | None = None,
    ) -> None:
        """Capture `run(size)` for each bucket, largest first, into `pool` (default a new one).

        prepare(size): fill the persistent inputs with an inert step of that size.
        run(size): the forward over those buffers; returns the graph's output tensor.
        pool_bytes: what the pool grew by during these captures.
        """
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        before = torch.cuda.memory_reserved()
        pool = torch.cuda.graph_pool_handle() if pool is None else pool
        for size in sorted(buckets, reverse=True):
            prepare(size)
            # Warm up outside the graph (Triton compiles, cuBLAS picks kernels) on the current
            # stream: its blocks go back to the cache eager steps use, which the activation
            # budget covers. A side stream per warm-up left each one's blocks reserved for a
            # stream nothing used again.
            run(size)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, pool=pool):
                out = run(size)
            self._graphs[size] = graph
            self._outputs[size] = out
        torch.cuda.synchronize()
        torch.cuda.empty_cache()  # so pool_bytes counts the graphs' pool, not cached warm-up blocks
        self.buckets = sorted(self._graphs)
        self.pool_bytes = max(0, torch.cuda.memory_reserved() - before)
        log.info("captured %d %s CUDA graphs (%d..%d), pool +%.1f MB", len(self._graphs), self.kind,
                 self.buckets[0], self.buckets[-1], self.pool_bytes / 1e6)

    def bucket_for(self, n: int) -> int | None:
        return bucket_for(n, self.buckets)

    def replay(self, size: int) -> torch.Tensor:
        """Run the graph of bucket `size`; returns its output (valid until the next replay of any graph)."""
        self._graphs[size].replay()
        return self._outputs[size]

    def reset(self) -> None:
        self._graphs.clear()
        self._outputs.clear()
        self.buckets = []
