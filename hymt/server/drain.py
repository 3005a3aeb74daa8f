"""Graceful shutdown: what SIGTERM does before the server stops listening.

    1. admission closes: new model requests get 503 with Retry-After, /ready turns 503;
    2. the admitted requests run on, for at most --shutdown-timeout seconds;
    3. whatever still runs then is cut: a request gets 503, a stream ends with its protocol's
       error event, and their engine requests are cancelled;
    4. uvicorn stops (the socket closes, the engine is closed) and the process exits 0.

`Drain.run()` does 1-3 on the event loop; `hymt/server/shutdown.py` starts it from the signal.
Streams register their per-chunk timeouts with `track()`, so the cut reaches a stream that
waits for its next token, not only between tokens.
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from hymt.server.admission import Admission

logger = logging.getLogger(__name__)

#: How often the drain looks whether the admitted requests have finished.
_POLL_S = 0.05
#: How long cut requests get to send their last event before uvicorn stops.
CUT_GRACE_S = 2.0


class Drain:
    """The shutdown state of one app: closing, draining, cut."""

    def __init__(self, admission: Admission, timeout: float, on_start: Callable[[], None] = lambda: None):
        self.admission = admission
        self.timeout = timeout
        self._on_start = on_start  # the model supervisor's hold: no engine restarts while draining
        self.started_at: float | None = None
        self.cut_done = False
        self._cut: asyncio.Future[None] | None = None
        self._streams: set[asyncio.Timeout] = set()

    @property
    def draining(self) -> bool:
        return self.started_at is not None

    def cut_future(self) -> asyncio.Future[None]:
        """Resolves when running requests must stop (created on the running loop once)."""
        if self._cut is None:
            self._cut = asyncio.get_running_loop().create_future()
            if self.cut_done:
                self._cut.set_result(None)
        return self._cut

    @contextmanager
    def track(self, timeout: asyncio.Timeout) -> Iterator[None]:
        """Cut `timeout` (a stream's wait for its next chunk) at once when the drain cuts."""
        if self.cut_done:
            timeout.reschedule(asyncio.get_running_loop().time())
        self._streams.add(timeout)
        try:
            yield
        finally:
            self._streams.discard(timeout)

    async def run(self) -> None:
        """Close admission, wait for the admitted requests up to the timeout, cut the rest."""
        if self.draining:
            return
        self.started_at = time.monotonic()
        self.admission.close()
        self._on_start()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout
        running = self.admission.requests
        logger.info("shutting down: %d requests running, waiting up to %.0f s (--shutdown-timeout)",
                    running, self.timeout)
        while self.admission.requests and loop.time() < deadline:
            await asyncio.sleep(_POLL_S)
        if not self.admission.requests:
            return
        logger.warning("shutdown timeout: cutting %d running requests", self.admission.requests)
        self.cut()
        grace_end = loop.time() + CUT_GRACE_S
        while self.admission.requests and loop.time() < grace_end:
            await asyncio.sleep(_POLL_S)

    def cut(self) -> None:
        """End every running request now (503 / a stream's error event)."""
        self.cut_done = True
        if self._cut is not None and not self._cut.done():
            self._cut.set_result(None)
        now = asyncio.get_running_loop().time()
        for timeout in list(self._streams):
            if timeout.when() is None or timeout.when() > now:  # type: ignore[operator]
                timeout.reschedule(now)
