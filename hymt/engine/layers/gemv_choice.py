"""Which kernel runs a projection at one to four rows: cuBLAS or the Triton GEMV.

Decided once at start-up, before the CUDA graphs are captured, by timing both on the
model's own weight shapes on the device at hand, with the weights read from memory as in
the model (the winner differs by shape and by card: docs/reference/engine.md §3.5). Each
plain `Linear` then carries `gemv_rows`: the largest row count up to which the Triton GEMV
was faster at every row count it was timed at.
"""
from __future__ import annotations

import functools
import logging
from collections.abc import Callable

import torch
from torch import nn

from hymt.engine.layers.linear import Linear
from hymt.gc_tuning import freeze_heap

log = logging.getLogger(__name__)

ROW_COUNTS = (1, 2, 4)
# The GEMV must win by this much: timings of ~10 us kernels wobble by a few percent.
MIN_GAIN = 0.05
_CALLS_PER_GRAPH = 20


def choose_gemv_kernels(model: nn.Module) -> dict[tuple[int, int], int]:
    """Set `gemv_rows` on every plain Linear of `model` (CUDA, 16-bit weights); returns
    {(out_features, in_features): gemv_rows} for the log and tests."""
    from hymt.engine.layers.triton_gemv import gemv_triton

    layers = [m for m in model.modules() if isinstance(m, Linear) and _eligible(m.weight)]
    if layers:
        freeze_heap()  # each timing captures a CUDA graph: 6-12 s of start-up on an H100 unfrozen
    choice: dict[tuple[int, int], int] = {}
    for layer in layers:
        shape = (layer.out_features, layer.in_features)
        if shape not in choice:
            choice[shape] = _choose(layer, gemv_triton)
        layer.gemv_rows = choice[shape]
    return choice


def _choose(layer: Linear, gemv: Callable[..., torch.Tensor]) -> int:
    """The layer's gemv_rows, logged with its timings; 0 (cuBLAS) when the GEMV cannot be timed."""
    shape = (layer.out_features, layer.in_features)
    try:
        rows, timings = _gemv_rows(layer, gemv)
    except Exception as exc:  # noqa: BLE001 - a kernel this card cannot build or time: cuBLAS it is
        log.warning("weight %dx%d: cuBLAS (the Triton GEMV could not be timed: %r)", *shape, exc)
        return 0
    log.info("weight %dx%d: Triton GEMV up to %d rows; us per call (cuBLAS / Triton) %s", *shape, rows,
             ", ".join(f"{m} rows {c:.1f} / {t:.1f}" for m, c, t in timings))
    return rows


def _eligible(weight: torch.Tensor) -> bool:
    return weight.is_cuda and weight.dtype in (torch.bfloat16, torch.float16) and weight.stride(-1) == 1


def _gemv_rows(layer: Linear, gemv: Callable[..., torch.Tensor]) -> tuple[int, list[tuple[int, float, float]]]:
    """(gemv_rows, [(rows, cuBLAS us, Triton us) for each row count timed])."""
    weights = _copies_past_l2(layer.weight)
    rows, timings = 0, []
    for m in ROW_COUNTS:
        x = torch.randn(m, layer.in_features, device=layer.weight.device, dtype=layer.weight.dtype)
        cublas = _time_us([functools.partial(torch.nn.functional.linear, x, w, layer.bias) for w in weights])
        triton = _time_us([functools.partial(gemv, x, w, layer.bias) for w in weights])
        timings.append((m, cublas, triton))
        if triton > cublas * (1 - MIN_GAIN):
            break
        rows = m
    del weights
    torch.cuda.empty_cache()
    return rows, timings


def _copies_past_l2(weight: torch.Tensor) -> list[torch.Tensor]:
    """The weight and enough copies of it that cycling through them reads from memory, as a
    model's layers do, not from the L2 cache: timed alone, a 2048 x 2048 bf16 weight stays in
    an H100's 50 MB L2 and every kernel looks several times faster than it runs in the model."""
    l2 = torch.cuda.get_device_properties(weight.device).L2_cache_size
    size = weight.numel() * weight.element_size()
    return [weight] + [weight.clone() for _ in range(-(-2 * l2 // size) - 1)]


def _time_us(calls: list[Callable[[], torch.Tensor]]) -> float:
    """Microseconds per call, cycling through `calls`, replayed from a CUDA graph so launch
    costs do not count."""
    for call in calls[:1]:
        call()  # compile / pick kernels outside the capture
    torch.cuda.synchronize()
    count = max(_CALLS_PER_GRAPH, len(calls))
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for i in range(count):
            calls[i % len(calls)]()
    graph.replay()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        graph.replay()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1000 / (5 * count)
