"""Running a pipeline's rounds against the engine: submit, wait, report progress, record.

`Pipeline.run` yields rounds of requests and is sent their outputs; the drivers here submit a
round to the AsyncEngine all at once, advance the progress as requests finish, and, with an
OutputLog, reuse recorded answers and record new ones as they arrive (output_log.py).
"""
from __future__ import annotations

import asyncio
from collections.abc import Generator
from dataclasses import dataclass

from hymt.engine.async_engine import AsyncEngine, RequestHandle
from hymt.engine.outputs import RequestOutput
from hymt.translate.output_log import OutputLog, RecordedOutput, request_key
from hymt.translate.pipeline import DocumentOutcome, Round
from hymt.translate.progress import Progress

PipelineRun = Generator[Round, list[RequestOutput], list[DocumentOutcome]]
#: Answers of one round judged on the event loop; more go to a worker thread.
INLINE_ANSWERS = 16


def drive_blocking(run: PipelineRun, engine: AsyncEngine, progress: Progress) -> list[DocumentOutcome]:
    """Run every round from blocking code, the requests of a round together."""
    try:
        round_ = next(run)
        while True:
            handles = [engine.submit(r.prompt_ids, r.params, stream=False) for r in round_.requests]
            try:
                outputs = []
                for handle, weight in zip(handles, round_.weights):
                    outputs.append(handle.result())
                    progress.advance(weight)
            except BaseException:
                _cancel(handles)
                raise
            round_ = run.send(outputs)
    except StopIteration as done:
        return done.value


async def drive_async(run: PipelineRun, engine: AsyncEngine, progress: Progress,
                      log: OutputLog | None = None) -> list[DocumentOutcome]:
    """Run every round from asyncio; with `log`, recorded answers are reused and new ones
    recorded as each request finishes."""
    step: Round | _Done = next(run)
    while isinstance(step, Round):
        outputs = await _round(step, engine, progress, log)
        if len(outputs) > INLINE_ANSWERS:  # judging answers and rendering: off the event loop
            step = await asyncio.to_thread(_advance, run, outputs)
        else:
            step = _advance(run, outputs)
    return step.outcomes


@dataclass(frozen=True)
class _Done:
    outcomes: list[DocumentOutcome]


def _advance(run: PipelineRun, outputs: list[RequestOutput]) -> Round | _Done:
    """The next round, or the outcomes (a StopIteration cannot cross a thread's future)."""
    try:
        return run.send(outputs)
    except StopIteration as done:
        return _Done(done.value)


async def _round(round_: Round, engine: AsyncEngine, progress: Progress, log: OutputLog | None) -> list[RequestOutput]:
    outputs: list[RequestOutput | None] = [None] * len(round_.requests)
    keys: list[str] = []
    pending: dict[int, RequestHandle] = {}
    for i, request in enumerate(round_.requests):
        key = request_key(request.prompt_ids, request.params) if log is not None else ""
        keys.append(key)
        recorded = log.get(key) if log is not None else None
        if recorded is not None:
            outputs[i] = recorded.as_output(request.prompt_ids)
            progress.advance(round_.weights[i])
        else:
            pending[i] = engine.submit(request.prompt_ids, request.params, stream=False)
    try:
        if len(pending) == 1:  # the usual server request: awaited as is, gather would wrap it in a task
            (i, handle), = pending.items()
            outputs[i] = out = await handle.wait()
            _finished(i, out, round_, progress, log, keys)
        elif pending:
            await asyncio.gather(*(_finish(i, h, outputs, round_, progress, log, keys) for i, h in pending.items()))
    except BaseException:
        _cancel(list(pending.values()))
        raise
    return [out for out in outputs if out is not None]


async def _finish(i: int, handle: RequestHandle, outputs: list[RequestOutput | None], round_: Round,
                  progress: Progress, log: OutputLog | None, keys: list[str]) -> None:
    outputs[i] = out = await handle.wait()
    _finished(i, out, round_, progress, log, keys)


def _finished(i: int, out: RequestOutput, round_: Round, progress: Progress, log: OutputLog | None,
              keys: list[str]) -> None:
    progress.advance(round_.weights[i])
    if log is not None:
        log.put(keys[i], RecordedOutput.of(out))


def _cancel(handles: list[RequestHandle]) -> None:
    for handle in handles:
        handle.cancel()
