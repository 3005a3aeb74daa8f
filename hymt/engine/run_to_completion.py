"""The one loop that runs requests to completion on an `Engine`: add, step until done, collect.

`Engine.generate`, `LLM.generate` and the benchmark's closed loop are this loop with different
arguments. AsyncEngine drives engines on a thread of its own for callers that do not wait.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from hymt.engine.outputs import RequestOutput
from hymt.engine.sampling import SamplingParams
from hymt.errors import EngineError

if TYPE_CHECKING:
    from hymt.engine.interface import Engine

Request = tuple[Sequence[int], SamplingParams]


def run_to_completion(
    engine: Engine,
    requests: Iterable[Request],
    *,
    max_in_flight: int | None = None,
    on_output: Callable[[RequestOutput], None] | None = None,
) -> list[RequestOutput]:
    """Run every (prompt token ids, params) request to its end; final outputs in input order.

    max_in_flight: at most this many of the requests are in the engine at once, the next added
        as one finishes (what that many clients ask of an engine); None adds them all at once.
    on_output: called with each output of these requests as the engine returns it, one per
        step that made progress (the last has finished=True).

    The engine is stepped until it has no work left, so an engine that returns a step late
    (the native engine's overlap) ends idle. If anything raises, the requests still running
    are aborted first. An engine that stops with one of them unfinished is an EngineError.
    """
    if max_in_flight is not None and max_in_flight < 1:
        raise ValueError(f"max_in_flight must be >= 1 or None, got {max_in_flight}")
    queue: Iterator[tuple[int, Request]] = enumerate(requests)
    index_of: dict[str, int] = {}  # request id -> position in `requests`
    done: dict[int, RequestOutput] = {}

    def add_next() -> bool:
        item = next(queue, None)
        if item is None:
            return False
        index, (prompt, params) = item
        index_of[engine.add_request(prompt, params)] = index
        return True

    try:
        while (max_in_flight is None or len(index_of) - len(done) < max_in_flight) and add_next():
            pass
        while engine.has_unfinished():
            for out in engine.step():
                index = index_of.get(out.request_id)
                if index is None:
                    continue  # another caller's request
                if out.error is not None:  # the engine refused this request after accepting it
                    raise out.error
                if on_output is not None:
                    on_output(out)
                if out.finished:
                    done[index] = out
                    add_next()
    except BaseException:
        for request_id, index in index_of.items():
            if index not in done:
                engine.abort(request_id)
        raise
    missing = [rid for rid, index in index_of.items() if index not in done]
    if missing or next(queue, None) is not None:
        raise EngineError(f"the engine stopped with requests unfinished: {missing[:5]}")
    return [done[i] for i in range(len(done))]
