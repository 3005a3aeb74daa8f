"""`hymt serve`'s uvicorn server: SIGTERM drains before stopping, and the exit status is 0.

uvicorn on its own stops listening at the first SIGTERM, gives running requests a fixed
grace and re-raises the signal when it is done (so the process ends killed by SIGTERM, not
with status 0). Here the first SIGTERM or SIGINT starts the drain (hymt/server/drain.py)
with the socket still open, so new requests get a clear 503 rather than a refused
connection; uvicorn is asked to stop only once the drain is over. A second signal stops at
once.
"""
from __future__ import annotations

import asyncio
import logging
import signal
import socket
from types import FrameType

import uvicorn

from hymt.server.drain import CUT_GRACE_S, Drain

logger = logging.getLogger(__name__)

#: uvicorn's own wait for connections after the drain: cut streams are writing their last event.
UVICORN_GRACE_S = CUT_GRACE_S + 1


class DrainingServer(uvicorn.Server):
    """uvicorn.Server whose shutdown signal drains `drain` first."""

    def __init__(self, config: uvicorn.Config, drain: Drain):
        super().__init__(config)
        self.drain = drain
        self._loop: asyncio.AbstractEventLoop | None = None
        self._drain_task: asyncio.Task[None] | None = None

    async def serve(self, sockets: list[socket.socket] | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        await super().serve(sockets)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        # Not recorded in _captured_signals: uvicorn would re-raise it after shutting down.
        if self._loop is None or self.drain.draining or self.should_exit:
            self.should_exit = True
            if sig == signal.SIGINT and self.drain.draining:
                self.force_exit = True
            return
        logger.info("received %s: draining", signal.Signals(sig).name)
        self._loop.call_soon_threadsafe(self._start_drain)

    def _start_drain(self) -> None:
        self._drain_task = asyncio.ensure_future(self._drain_then_stop())

    async def _drain_then_stop(self) -> None:
        try:
            await self.drain.run()
        finally:
            self.should_exit = True
