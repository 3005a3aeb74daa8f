"""Where an engine step's time went, phase by phase (timed by step_timer.py).

A plain record without torch, so the engine's stats carry it across processes and into
`hymt bench` reports.
"""
from __future__ import annotations

from dataclasses import dataclass

PHASES = ("schedule", "prepare", "forward", "sample", "wait", "postprocess")


@dataclass(frozen=True)
class StepProfile:
    """Accumulated phase times (seconds) over `steps` steps, with tokens and sequences handled."""

    steps: int
    tokens: int
    seqs: int
    seconds: dict[str, float]

    def since(self, earlier: StepProfile) -> StepProfile:
        """The steps timed after `earlier` (a summary of the same timer)."""
        return StepProfile(self.steps - earlier.steps, self.tokens - earlier.tokens, self.seqs - earlier.seqs,
                           {k: v - earlier.seconds.get(k, 0.0) for k, v in self.seconds.items()})

    def format(self) -> str:
        if not self.steps:
            return "no steps"
        per = " ".join(f"{k} {1e3 * v / self.steps:.2f}" for k, v in self.seconds.items())
        total = 1e3 * sum(self.seconds.values()) / self.steps
        return (f"{self.steps} steps, {self.tokens / self.steps:.0f} tok/step, {self.seqs / self.steps:.0f} "
                f"seq/step; ms/step: {per} (total {total:.2f})")
