"""The engine child of an EngineProcess: builds the engine, then steps it for as long as it has work.

The parent's commands are applied between steps; each step sends one StepReport
(process_messages.py). A request the engine refuses becomes a Rejection; a step that raises
becomes a StepReport with `step_error`, and the loop goes on.
"""
from __future__ import annotations

import dataclasses
import logging
import pickle
import queue
import threading
import time
from multiprocessing.connection import Connection

from hymt.engine.interface import Engine, EngineStats
from hymt.engine.process_messages import (
    AbortRequest,
    Close,
    Command,
    EngineSpec,
    ParentMessage,
    Rejection,
    RequestProgress,
    Started,
    StartFailed,
    StepReport,
)
from hymt.errors import EngineError

log = logging.getLogger(__name__)


def child_main(conn: Connection, spec: EngineSpec, log_level: int) -> None:
    """The child process's entry point."""
    if spec.log_setup is not None:
        spec.log_setup()
    else:
        logging.basicConfig(level=log_level,
                            format="%(asctime)s %(levelname)s %(name)s [engine pid %(process)d]: %(message)s")
    try:
        engine = spec.build()
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which raises it
        conn.send(StartFailed(picklable(exc)))
        return
    conn.send(Started(tuple(engine.stop_token_ids), engine.device_name(), engine.memory_report(), engine.stats()))
    try:
        ChildLoop(conn, engine).run()
    finally:
        engine.close()


class ChildLoop:
    """Applies the parent's commands between steps; steps while there is work; one report per step.

    A reader thread drains the pipe into a queue at all times, so the parent's sends never
    wait on this loop: were both sides blocked sending into full pipes, neither would read.
    """

    def __init__(self, conn: Connection, engine: Engine):
        self.conn, self.engine = conn, engine
        self.rejected: list[Rejection] = []
        self.final_only: set[str] = set()  # requests whose per-step outputs are not sent
        self.inbox: queue.SimpleQueue[ParentMessage] = queue.SimpleQueue()
        threading.Thread(target=self._read, name="hymt-engine-commands", daemon=True).start()

    def _read(self) -> None:
        try:
            while True:
                message: ParentMessage = self.conn.recv()
                self.inbox.put(message)
                if isinstance(message, Close):
                    return
        except (EOFError, OSError):  # the parent is gone
            self.inbox.put(Close())

    def run(self) -> None:
        while True:
            applied = self._apply(block=not self.engine.has_unfinished() and not self.rejected)
            if applied is None:
                return
            if self.engine.has_unfinished():
                self._step()
            elif self.rejected or applied:  # rejections, or fresh stats after aborts
                self.conn.send(StepReport.of([], self._take_rejected(), self._stats()))

    def _apply(self, *, block: bool) -> int | None:
        """Apply every waiting message; how many commands, or None once the parent said close."""
        applied = 0
        while True:
            try:
                message = self.inbox.get(block=block)
            except queue.Empty:
                return applied
            block = False
            if isinstance(message, Close):
                return None
            for command in message.commands:
                self._command(command)
                applied += 1

    def _command(self, command: Command) -> None:
        if isinstance(command, AbortRequest):
            self.engine.abort(command.request_id)
            self.final_only.discard(command.request_id)
            return
        try:
            self.engine.add_request(command.prompt_token_ids, command.params, request_id=command.request_id,
                                    final_only=command.final_only)
        except Exception as exc:  # noqa: BLE001 - fails only this request, in the parent
            self.rejected.append(Rejection(command.request_id, picklable(exc)))
            return
        if command.final_only:
            self.final_only.add(command.request_id)

    def _step(self) -> None:
        try:
            outputs = self.engine.step()
        except Exception as exc:  # noqa: BLE001 - the parent fails what is in flight
            log.exception("engine step failed")
            self.conn.send(StepReport.of([], self._take_rejected(), self._stats(),
                                         step_error=f"engine step failed: {exc!r}"))
            return
        progress: list[RequestProgress] = []
        for o in outputs:
            if o.request_id in self.final_only:
                if not o.finished:
                    continue
                self.final_only.discard(o.request_id)
                new = list(o.token_ids)
            else:
                new = list(o.new_token_ids)
            progress.append((o.request_id, new, o.finish_reason if o.finished else None, o.arrival_time,
                             o.first_token_time, o.finish_time))
        self.conn.send(StepReport.of(progress, self._take_rejected(), self._stats()))

    def _stats(self) -> EngineStats:
        """The engine's counters and this process's CPU time (which the parent cannot see)."""
        return dataclasses.replace(self.engine.stats(), engine_process_cpu_seconds=time.process_time())

    def _take_rejected(self) -> tuple[Rejection, ...]:
        rejected, self.rejected = self.rejected, []
        return tuple(rejected)


def picklable(exc: BaseException) -> BaseException:
    """`exc` if it survives pickling (hymt's errors do), else an EngineError with its text."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001
        return EngineError(f"{type(exc).__name__}: {exc}")
