"""EngineConnection: an `Engine` whose real engine runs in an engine child, over one connection.

The two ways to reach a child share everything here: EngineProcess spawns the child and
talks over the spawning pipe; EngineClient connects to a child that listens on a Unix socket
(several server processes in front of one engine). Only token ids cross.

The child steps for as long as it has work and sends one StepReport per step while this
side has requests in flight (every request's new tokens, finishes and the engine's stats;
process_messages.py); `step()` here receives one. Commands (add, abort) are buffered and
sent as one message before each receive. A request the child rejects comes back as a
finished output carrying the error; a failing step comes back as an error that `step()`
raises (AsyncEngine then fails the requests in flight). Once the connection is lost (the
child died), every later call raises EngineError.
"""
from __future__ import annotations

import threading
from collections import deque
from collections.abc import Sequence
from multiprocessing.connection import Connection
from typing import NoReturn

from hymt.engine.interface import Engine, EngineStats
from hymt.engine.memory_report import MemoryReport
from hymt.engine.outputs import FinishReason, RequestOutput
from hymt.engine.process_messages import (
    AbortRequest,
    AddRequest,
    ChildMessage,
    Command,
    Commands,
    ParentMessage,
    Started,
    StepReport,
)
from hymt.engine.sampling import SamplingParams
from hymt.errors import EngineError

__all__ = ["EngineConnection"]


class EngineConnection(Engine):
    """The Engine side of one connection to an engine child that has sent `started`."""

    def __init__(self, conn: Connection, started: Started):
        self._conn = conn
        self._inflight: dict[str, tuple[list[int], list[int]]] = {}  # id -> (prompt ids, tokens so far)
        self._commands: list[Command] = []
        self._count = 0
        self._dead: str | None = None
        self._lost: str | None = None  # the connection ended (seen by a reader other than step())
        self._closed = False
        # One reader at a time: step() runs on the AsyncEngine's loop thread, stats() may be
        # called from any thread, and two readers of one pipe tear its messages apart. What
        # stats() reads waits in _pending for step(): no output is lost.
        self._reading = threading.Lock()
        self._pending: deque[StepReport] = deque()
        self._sending = threading.Lock()  # the loop thread's commands; another thread's stats request
        self._stats_asked = False
        self.backend = started.backend
        self.stop_token_ids = started.stop_token_ids
        #: The child's device ("cuda:0"); device_name() says the same.
        self.device = started.device
        #: The engine child's process id.
        self.engine_pid = started.pid
        self._memory_report = started.memory_report
        self._stats = started.stats

    # -- Engine ------------------------------------------------------------------------------
    def add_request(self, prompt_token_ids: Sequence[int], params: SamplingParams,
                    request_id: str | None = None, *, final_only: bool = False) -> str:
        """final_only: the child sends this request's tokens once, when it finishes."""
        self._check_alive()
        if request_id is None:
            request_id = f"proc-{self._count}"
            self._count += 1
        prompt = list(prompt_token_ids)
        self._inflight[request_id] = (prompt, [])
        self._commands.append(AddRequest(request_id, prompt, params, final_only))
        return request_id

    def abort(self, request_id: str) -> None:
        """Sent at once: with nothing else in flight no step() would carry it to the child."""
        if self._inflight.pop(request_id, None) is not None:
            self._commands.append(AbortRequest(request_id))
            if self._dead is None and not self._closed:
                self._flush()

    def has_unfinished(self) -> bool:
        return bool(self._inflight)

    def step(self) -> list[RequestOutput]:
        self._check_alive()
        self._flush()
        report = self._next_report()
        self._stats = report.stats
        inflight = self._inflight
        outputs = [self._output(*progress) for progress in report.progress() if progress[0] in inflight]
        outputs += [self._rejected(r.request_id, r.error) for r in report.rejected if r.request_id in inflight]
        if report.step_error is not None:
            raise EngineError(report.step_error)
        return outputs

    def stats(self) -> EngineStats:
        """The child's counters as of its last report. Reports waiting in the pipe (an abort's
        acknowledgement while nothing else is in flight) are read here and kept for step();
        while another thread reads the pipe (a step), the last counters stand."""
        self._read_waiting()
        return self._stats

    def memory_report(self) -> MemoryReport | None:
        return self._memory_report

    def device_name(self) -> str | None:
        return self.device

    # -- for subclasses -----------------------------------------------------------------------
    def _read_waiting(self) -> bool:
        """Read what waits in the connection (kept for step()); False once it is lost. A
        reader in another thread (a step) would see the loss itself: True then."""
        if self._dead is not None or self._closed:
            return False
        if not self._reading.acquire(blocking=False):
            return True
        try:
            while self._lost is None and self._conn.poll():
                report: StepReport = self._conn.recv()
                self._stats, self._stats_asked = report.stats, False
                if report.request_ids or report.rejected or report.step_error is not None:
                    self._pending.append(report)  # for step(); one of counters only has served
        except (EOFError, OSError) as exc:
            self._lost = repr(exc)  # step() reports it
        finally:
            self._reading.release()
        return self._lost is None

    def _ask_for_stats(self) -> None:
        """Ask the child for a report of fresh counters (an empty Commands), which a later
        stats() reads: with nothing in flight no step reports them. From any thread."""
        if self._stats_asked or self._inflight or self._dead is not None or self._closed:
            return
        self._stats_asked = True
        try:
            with self._sending:
                self._conn.send(Commands(()))
        except (OSError, ValueError):
            pass  # the next step or stats() sees the connection lost

    def _death_cause(self, error: str) -> str:
        """Why the connection ended, for the error every later call raises."""
        return error

    # -- internals ---------------------------------------------------------------------------
    def _output(self, rid: str, new: list[int], finish: FinishReason | None, arrival: float,
                first: float | None, finished_at: float | None) -> RequestOutput:
        prompt, tokens = self._inflight[rid]
        tokens.extend(new)  # a final-only request's one output carries all its tokens as new
        if finish is not None:
            del self._inflight[rid]
        return RequestOutput(rid, prompt, list(tokens), new, finish is not None, finish, arrival_time=arrival,
                             first_token_time=first, finish_time=finished_at)

    def _rejected(self, rid: str, error: BaseException) -> RequestOutput:
        prompt, _ = self._inflight.pop(rid)
        return RequestOutput(rid, prompt, finished=True, finish_reason="abort", error=error)

    def _flush(self) -> None:
        if self._commands:
            commands, self._commands = self._commands, []
            self._send(Commands(tuple(commands)))

    def _send(self, message: ParentMessage) -> None:
        try:
            with self._sending:
                self._conn.send(message)
        except (OSError, ValueError) as exc:
            self._died(f"could not reach it ({exc!r})")

    def _next_report(self) -> StepReport:
        message = self._receive()
        if not isinstance(message, StepReport):
            self._died(f"it sent {type(message).__name__} where a step report belongs")
        return message

    def _receive(self) -> ChildMessage:
        try:
            with self._reading:
                if self._pending:
                    return self._pending.popleft()
                if self._lost is not None:
                    raise EOFError(self._lost)
                message: ChildMessage = self._conn.recv()
                return message
        except (EOFError, OSError) as exc:
            self._died(self._death_cause(repr(exc)))

    def _died(self, why: str) -> NoReturn:
        self._dead = why
        self._inflight.clear()
        raise EngineError(f"the engine process died: {why}")

    def _check_alive(self) -> None:
        if self._closed:
            raise EngineError("the engine process is closed")
        if self._dead is not None:
            raise EngineError(f"the engine process died: {self._dead}")
