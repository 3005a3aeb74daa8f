"""Progress over a call's segments: a callable (done, total) or a tqdm-like bar."""
from __future__ import annotations

from collections.abc import Callable
from typing import Protocol


class ProgressBar(Protocol):
    """What Progress drives of a tqdm-like bar."""

    total: int | float | None

    def update(self, n: int) -> object: ...

    def refresh(self) -> object: ...


ProgressTarget = Callable[[int, int], object] | ProgressBar | None


class Progress:
    """Reports (done, total) to a callable, or drives a tqdm-like bar (`total`, `update`)."""

    def __init__(self, target: ProgressTarget) -> None:
        self.target, self.done, self.total = target, 0, 0

    def start(self, total: int) -> None:
        self.total = total
        target = self.target
        if target is None:
            return
        if callable(target):
            target(0, total)
        else:
            target.total = total
            target.refresh()

    def advance(self, n: int) -> None:
        target = self.target
        if n <= 0 or target is None:
            return
        self.done += n
        if callable(target):
            target(self.done, self.total)
        else:
            target.update(n)
