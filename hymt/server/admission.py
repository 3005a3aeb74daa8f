"""Admission: a bounded number of model requests in the server, 429 beyond it.

Every request that needs the model holds one slot from admission until its answer is sent
(for streams: until the stream ends). With `--max-queue N`, request N+1 is answered at once
with 429 and Retry-After instead of waiting in an unbounded queue; the engine itself still
schedules the admitted ones (running or waiting in its own queue).

`run_cancellable` runs the handler's work as a task and cancels it when the client
disconnects or the request timeout passes: cancelling the task cancels the Translator's
engine handles, so an abandoned request stops costing GPU time.
"""
from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import contextmanager
from typing import TypeVar

from fastapi import Request

from hymt.server.errors import ApiError

T = TypeVar("T")


class ClientGone(Exception):
    """The client closed the connection before its answer was ready."""


class Admission:
    """Counts admitted requests; `slot()` admits one or raises the 429 ApiError."""

    def __init__(self, limit: int, retry_after_s: int = 1):
        self.limit = limit
        self.retry_after_s = retry_after_s
        self.active = 0
        self.rejected = 0

    def acquire(self) -> None:
        if self.active >= self.limit:
            self.rejected += 1
            raise ApiError(
                429,
                f"the server is busy: {self.active} requests are in progress and the limit is {self.limit} "
                "(--max-queue); retry later",
                type="queue_full",
                headers={"Retry-After": str(self.retry_after_s)},
            )
        self.active += 1

    def release(self) -> None:
        self.active = max(0, self.active - 1)

    @contextmanager
    def slot(self):
        self.acquire()
        try:
            yield
        finally:
            self.release()


async def wait_for_disconnect(request: Request) -> None:
    """Returns when the client disconnects (the body must have been read already)."""
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


async def run_cancellable(request: Request, work: Callable[[], Awaitable[T]], timeout: float) -> T:
    """`await work()`, cancelled on client disconnect (ClientGone) or after `timeout` (504)."""
    task = asyncio.ensure_future(work())
    watcher = asyncio.ensure_future(wait_for_disconnect(request))
    try:
        done, _ = await asyncio.wait({task, watcher}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if task in done:
            return task.result()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        if watcher in done:
            raise ClientGone()
        raise ApiError(504, f"the request took longer than {timeout:g} s (--request-timeout) and was cancelled",
                       type="timeout")
    except asyncio.CancelledError:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        raise
    finally:
        watcher.cancel()
