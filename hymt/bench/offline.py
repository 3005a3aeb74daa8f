"""Offline throughput: every request submitted at once, the engine runs until all finish."""
from __future__ import annotations

import time
from collections.abc import Callable

import torch

from hymt.bench.results import ThroughputResult
from hymt.engine.interface import Engine
from hymt.engine.outputs import RequestOutput
from hymt.engine.run_to_completion import run_to_completion
from hymt.engine.sampling import SamplingParams
from hymt.engine.step_kinds import StepKinds
from hymt.engine.step_profile import StepProfile


def sync() -> None:
    """Wait for queued device work, so wall times cover it."""
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


def run_offline(
    engine: Engine, prompts: list[list[int]], params: SamplingParams, name: str, *, note: str = ""
) -> tuple[ThroughputResult, list[RequestOutput]]:
    """Submit `prompts` together through the Engine interface and time the run to the last result."""
    return _timed(engine, name, prompts, params, note, lambda: engine.generate(prompts, params))


def run_closed_loop(
    engine: Engine, prompts: list[list[int]], params: SamplingParams, concurrency: int, name: str
) -> ThroughputResult:
    """Keep `concurrency` requests in flight, submitting the next prompt as each finishes: what
    that many server clients ask of the engine, without the server. Arrivals then trickle in
    at every step instead of all at once."""
    note = f"{concurrency} requests in flight, the next submitted as each finishes"
    result, _ = _timed(engine, name, prompts, params, note, lambda: run_to_completion(
        engine, ((prompt, params) for prompt in prompts), max_in_flight=concurrency))
    return result


def _timed(engine: Engine, name: str, prompts: list[list[int]], params: SamplingParams, note: str,
           run: Callable[[], list[RequestOutput]]) -> tuple[ThroughputResult, list[RequestOutput]]:
    """`run()` timed from a synced device to the last result, with the engine's steps in it."""
    before = engine.stats()
    sync()
    start = time.perf_counter()
    outputs = run()
    sync()
    wall = time.perf_counter() - start
    after = engine.stats()
    steps = after.step_kinds.since(before.step_kinds)
    phases = None
    if after.step_profile is not None and before.step_profile is not None:
        phases = after.step_profile.since(before.step_profile)
    return _measure(name, prompts, outputs, wall, params, note, _latencies(outputs),
                    steps if steps.steps else None, phases), outputs


def _latencies(outputs: list[RequestOutput]) -> list[float]:
    """Each request's seconds from submission to its last token, where the engine stamped both."""
    return [o.finish_time - o.arrival_time for o in outputs if o.finish_time is not None and o.arrival_time]


def _measure(name: str, prompts: list[list[int]], outputs: list[RequestOutput], wall: float,
             params: SamplingParams, note: str, latencies_s: list[float] | None = None,
             steps: StepKinds | None = None, phases: StepProfile | None = None) -> ThroughputResult:
    return ThroughputResult.measure(name, len(outputs), wall, sum(len(p) for p in prompts),
                                    sum(len(o.token_ids) for o in outputs),
                                    note=_short_answers_note(outputs, params, note), latencies_s=latencies_s,
                                    steps=steps, phases=phases)


def _short_answers_note(outputs: list[RequestOutput], params: SamplingParams, note: str) -> str:
    """Says so when forced-length answers came back short (the rates count real tokens)."""
    if not params.ignore_eos:
        return note
    short = sum(1 for o in outputs if len(o.token_ids) != params.max_tokens)
    if not short:
        return note
    extra = f"{short} of {len(outputs)} answers are not {params.max_tokens} tokens long"
    return f"{note}; {extra}" if note else extra
