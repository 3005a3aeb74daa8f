"""Per-step time split for profiling the engine loop: EngineConfig.step_profile (HYMT_PROFILE).

Phases: schedule (scheduler planning), prepare (filling and uploading inputs), forward
(model or graph replay), sample (sampler + queuing the copy of the ids), wait (until the ids
of the step being completed are on the host), postprocess (scheduler update and outputs).

"sync" ends each phase with a device synchronisation, so GPU time lands in the phase
that launched it (this serialises host and device: no overlap). "cpu" measures
host time only, without synchronising: "wait" is then the time the host idles on the GPU,
and the other phases are what overlap hides. Every `every` steps a summary line is logged
at INFO (logger hymt.engine.step_timer).
"""
from __future__ import annotations

import logging
import time

import torch

from hymt.engine.step_profile import PHASES, StepProfile

log = logging.getLogger(__name__)


class StepTimer:
    """Accumulates phase durations; a no-op when `mode` is "off" (EngineConfig.step_profile)."""

    def __init__(self, device: torch.device, *, mode: str = "off", every: int = 100):
        self.enabled = mode != "off"
        self.sync = mode == "sync" and torch.device(device).type == "cuda"
        self.every = every
        self.reset()

    def reset(self) -> None:
        self._seconds = dict.fromkeys(PHASES, 0.0)
        self._steps = self._tokens = self._seqs = 0
        self._t = 0.0

    def start(self) -> None:
        if self.enabled:
            self._t = time.perf_counter()

    def lap(self, phase: str) -> None:
        """Close `phase` (started at the previous start/lap)."""
        if not self.enabled:
            return
        if self.sync:
            torch.cuda.synchronize()
        now = time.perf_counter()
        self._seconds[phase] += now - self._t
        self._t = now

    def end_step(self, num_tokens: int, num_seqs: int) -> None:
        if not self.enabled:
            return
        self._steps += 1
        self._tokens += num_tokens
        self._seqs += num_seqs
        if self._steps % self.every == 0:
            log.info("step profile: %s", self.summary().format())

    def summary(self) -> StepProfile:
        return StepProfile(self._steps, self._tokens, self._seqs, dict(self._seconds))
