"""Keeping Python's cyclic garbage collector off a long-lived heap while a server or engine runs.

Everything alive once a model is loaded (torch, the tokenizer, the model's modules, the app)
lives as long as the process serves, yet every full collection walks all of it, and the
objects of requests in flight survive young collections and so keep triggering full ones.
Freezing moves that heap out of the collector's generations; a higher young threshold makes
collections rare (reference counting frees nearly all of a step's or request's objects).
Measured: ~ms per engine step at batch 1,000, ~0.2 ms of the HTTP process's CPU a request.
"""
from __future__ import annotations

import gc

#: Allocations between young collections while tuned.
TUNED_THRESHOLD = 50_000


def freeze_heap() -> None:
    """Collect once, then move what is alive out of the collector's generations. Also before a
    run of CUDA-graph captures: torch.cuda.graph() runs gc.collect() at every capture, which
    otherwise walks the whole loaded process each time."""
    gc.collect()
    gc.freeze()


def tune_collector() -> tuple[int, int, int]:
    """Freeze what is alive now and raise the young threshold; returns the thresholds replaced."""
    freeze_heap()
    old = gc.get_threshold()
    if old[0] < TUNED_THRESHOLD:
        gc.set_threshold(TUNED_THRESHOLD, *old[1:])
    return old


def untune_collector(old: tuple[int, int, int]) -> None:
    """Undo `tune_collector` (tests start many engines and servers in one process)."""
    gc.unfreeze()
    if gc.get_threshold()[0] == TUNED_THRESHOLD:
        gc.set_threshold(*old)
