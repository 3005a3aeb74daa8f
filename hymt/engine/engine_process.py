"""EngineProcess: an `Engine` whose real engine runs in a child process.

The native engine's step is Python work (scheduling, building inputs, launching graphs) that
overlaps the device's compute. In the server process it shares one GIL with the HTTP layer,
the pipeline (segmenting, tokenizing, quality checks) and the event loop; measured on an
H200, that sharing cut the engine to a fraction of its offline rate. In a child process the
engine loop keeps a core and a GIL to itself and only token ids cross the pipe:

    engine = EngineProcess(EngineSpec("native", "/models/hy-mt"))   # blocks until loaded
    AsyncEngine(engine)                                             # as with any Engine

The child (engine_child.py) steps for as long as it has work; the exchange over the pipe is
EngineConnection's (engine_connection.py). With `listen=EngineAddress.private()` the child
also accepts EngineClients (engine_client.py) of other processes on a Unix socket: one
engine behind several HTTP worker processes. If the child dies, every later call raises
EngineError; the child ends when this side closes (or dies).
"""
from __future__ import annotations

import logging
import multiprocessing as mp
from multiprocessing.connection import Connection

from hymt.engine.engine_child import child_main
from hymt.engine.engine_connection import EngineConnection
from hymt.engine.process_messages import ChildMessage, Close, EngineAddress, EngineSpec, Started, StartFailed
from hymt.errors import EngineError, HymtError, ModelLoadError

__all__ = ["EngineAddress", "EngineProcess", "EngineSpec"]


class EngineProcess(EngineConnection):
    """Runs `spec.build()` in a spawned child; blocks until it is loaded (or raises ModelLoadError).

    listen: where the child also accepts EngineClients (it listens before it reports loaded).
    """

    def __init__(self, spec: EngineSpec, *, start_timeout_s: float = 1800.0, listen: EngineAddress | None = None):
        ctx = mp.get_context("spawn")  # CUDA cannot be forked
        conn, child_conn = ctx.Pipe()
        level = logging.getLogger("hymt").getEffectiveLevel()
        self._proc = ctx.Process(target=child_main, args=(child_conn, spec, level, listen),
                                 name="hymt-engine-process", daemon=True)
        self._proc.start()
        child_conn.close()
        super().__init__(conn, self._start(conn, start_timeout_s))
        #: Where the child accepts EngineClients (None: this process is its only client).
        self.address = listen

    @property
    def pid(self) -> int | None:
        """The child's process id while it runs."""
        return self._proc.pid if self._proc.is_alive() else None

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._conn.send(Close())
        except (OSError, ValueError):
            pass
        self._proc.join(30)
        if self._proc.is_alive():
            self._proc.terminate()
            self._proc.join(5)
        self._conn.close()

    def _death_cause(self, error: str) -> str:
        return f"exit code {self._proc.exitcode} ({error})"

    def _start(self, conn: Connection, timeout_s: float) -> Started:
        if not conn.poll(timeout_s):
            self._proc.terminate()
            self._proc.join(10)
            raise ModelLoadError(f"the engine process could not start: no message after {timeout_s:.0f} s")
        try:
            message: ChildMessage = conn.recv()
        except (EOFError, OSError) as exc:
            self._proc.join(10)
            raise ModelLoadError(f"the engine process died while starting: exit code {self._proc.exitcode}") from exc
        if isinstance(message, Started):
            return message
        self._proc.join(10)
        error = message.error if isinstance(message, StartFailed) else EngineError(f"unexpected {message!r}")
        if isinstance(error, HymtError):
            raise error
        raise ModelLoadError(f"the engine process could not start: {error!r}") from error
