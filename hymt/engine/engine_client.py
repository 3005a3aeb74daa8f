"""EngineClient: an `Engine` over a connection to an engine child that listens (EngineProcess
with `listen=`), for the processes that did not spawn it:

    engine = EngineProcess(spec, listen=address)           # in the process that owns the engine
    client = EngineClient(address)                         # in any other process of the user
    AsyncEngine(client)                                    # as with any Engine

Requests of different clients never mix (their ids may collide: the child keeps them
apart); a client that closes or dies has its requests aborted in the child. Connecting
waits for the address to accept, so a client may be made while the engine loads or
restarts on the same address.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from multiprocessing.connection import Client, Connection

from hymt.engine.engine_connection import EngineConnection
from hymt.engine.interface import EngineStats
from hymt.engine.process_messages import ChildMessage, EngineAddress, Started
from hymt.errors import EngineError, ModelLoadError

__all__ = ["EngineClient"]

#: How often a connection is tried again while the address does not accept.
CONNECT_RETRY_S = 0.1


class EngineClient(EngineConnection):
    """Connects to the engine child listening on `address`; blocks until it has (or raises).

    Args:
        address: the child's socket and key.
        wait_s: how long to keep trying while nothing accepts (an engine that loads).
        abandon: asked between tries: a reason to stop waiting (the engine failed to load,
            as its owner says) raises ModelLoadError with it; None goes on waiting.
    """

    def __init__(self, address: EngineAddress, *, wait_s: float = 1800.0,
                 abandon: Callable[[], str | None] = lambda: None):
        conn = _connect(address, wait_s, abandon)
        try:
            if not conn.poll(wait_s):
                raise EngineError(f"the engine at {address.path} accepted but sent nothing in {wait_s:.0f} s")
            started: ChildMessage = conn.recv()
        except (EOFError, OSError) as exc:
            conn.close()
            raise EngineError(f"the engine at {address.path} closed the connection at once ({exc!r})") from exc
        if not isinstance(started, Started):
            conn.close()
            raise EngineError(f"the engine at {address.path} sent {type(started).__name__} first")
        super().__init__(conn, started)

    @property
    def pid(self) -> int | None:
        """The engine child's process id while the connection to it stands."""
        return self.engine_pid if self._read_waiting() else None

    def fresh_stats(self) -> EngineStats:
        """The engine's counters, at most one call old even while this client has nothing in
        flight (other clients' requests change them; no report of theirs reaches this one)."""
        self._read_waiting()
        self._ask_for_stats()
        return self._stats

    def close(self) -> None:
        """Closes the connection: the child aborts this client's requests."""
        if self._closed:
            return
        self._closed = True
        self._conn.close()

    def _death_cause(self, error: str) -> str:
        return f"the connection to pid {self.engine_pid} ended ({error})"


def _connect(address: EngineAddress, wait_s: float, abandon: Callable[[], str | None]) -> Connection:
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return Client(address.path, family="AF_UNIX", authkey=address.authkey)
        except (FileNotFoundError, ConnectionRefusedError) as exc:  # not listening (yet, or again)
            reason = abandon()
            if reason is not None:
                raise ModelLoadError(reason) from exc
            if time.monotonic() >= deadline:
                raise EngineError(f"no engine accepted at {address.path} within {wait_s:.0f} s") from exc
            time.sleep(CONNECT_RETRY_S)
