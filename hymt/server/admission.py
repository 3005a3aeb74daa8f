"""Admission: a bounded number of texts in the server, 429 beyond it, 503 once shutting down.

Every request that needs the model holds its place from admission until its answer is sent
(for streams: until the stream ends). The places are counted in texts, the engine's unit of
work: a request of k texts takes k, so a 128-text batch counts as what it costs. With
`--max-queue N`, a request that does not fit is answered at once with 429 and Retry-After
instead of waiting in an unbounded queue, and one of more than N texts with 413; the engine
itself still schedules the admitted ones (running or waiting in its own queue). Once SIGTERM
closes admission, new requests get 503 while the admitted ones finish (hymt/server/drain.py).

`run_cancellable` runs the handler's work as a task and cancels it when the client
disconnects, the request timeout passes or shutdown cuts it: cancelling the task cancels
the Translator's engine handles, so an abandoned request stops costing GPU time.
"""
from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from fastapi import Request

from hymt.server.errors import ApiError

T = TypeVar("T")


class ClientGone(Exception):
    """The client closed the connection before its answer was ready."""


def shutting_down_error() -> ApiError:
    """The 503 of a request refused or cut because the server is shutting down."""
    return ApiError(503, "the server is shutting down; retry in a moment (or on another instance)",
                    type="shutting_down", headers={"Retry-After": "1", "Connection": "close"})


class Admission:
    """Counts admitted texts and requests; `slot(weight)` admits one request or raises."""

    def __init__(self, limit: int, retry_after_s: int = 1):
        self.limit = limit
        self.retry_after_s = retry_after_s
        self.active = 0  # texts admitted
        self.requests = 0  # requests admitted
        self.rejected = 0
        self.closed = False

    def acquire(self, weight: int = 1) -> None:
        if self.closed:
            raise shutting_down_error()
        if weight > self.limit:
            raise ApiError(413, f"this request has {weight} texts; the server admits {self.limit} texts at once "
                           "(--max-queue): send fewer per request", type="too_large")
        if self.active + weight > self.limit:
            self.rejected += 1
            raise ApiError(
                429,
                f"the server is busy: {self.active} texts of {self.requests} requests are in progress, this one "
                f"has {weight} and the limit is {self.limit} (--max-queue); retry later",
                type="queue_full",
                headers={"Retry-After": str(self.retry_after_s)},
            )
        self.active += weight
        self.requests += 1

    def release(self, weight: int = 1) -> None:
        self.active = max(0, self.active - weight)
        self.requests = max(0, self.requests - 1)

    def close(self) -> None:
        """Refuse every later request with 503 (shutdown); admitted ones carry on."""
        self.closed = True

    @contextmanager
    def slot(self, weight: int = 1) -> Iterator[None]:
        self.acquire(weight)
        try:
            yield
        finally:
            self.release(weight)


async def wait_for_disconnect(request: Request) -> None:
    """Returns when the client disconnects (the body must have been read already)."""
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


async def run_cancellable(request: Request, work: Callable[[], Awaitable[T]], timeout: float,
                          cut: asyncio.Future[None]) -> T:
    """`await work()`, cancelled on client disconnect (ClientGone), after `timeout` (504) or
    when `cut` resolves (shutdown: 503)."""
    task = asyncio.ensure_future(work())
    watcher = asyncio.ensure_future(wait_for_disconnect(request))
    try:
        waiting: set[asyncio.Future[Any]] = {task, watcher, cut}
        done, _ = await asyncio.wait(waiting, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if task in done:
            return task.result()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        if watcher in done:
            raise ClientGone()
        if cut in done:
            raise shutting_down_error()
        raise ApiError(504, f"the request took longer than {timeout:g} s (--request-timeout) and was cancelled",
                       type="timeout")
    except asyncio.CancelledError:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        raise
    finally:
        watcher.cancel()
