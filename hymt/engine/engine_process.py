"""EngineProcess: an `Engine` whose real engine runs in a child process.

The native engine's step is Python work (scheduling, building inputs, launching graphs) that
overlaps the device's compute. In the server process it shares one GIL with the HTTP layer,
the pipeline (segmenting, tokenizing, quality checks) and the event loop; measured on an
H200, that sharing cut the engine to a fraction of its offline rate. In a child process the
engine loop keeps a core and a GIL to itself and only token ids cross the pipe:

    engine = EngineProcess(EngineSpec("native", "/models/hy-mt"))   # blocks until loaded
    AsyncEngine(engine)                                             # as with any Engine

The child steps for as long as it has work and sends one message per step (every request's
new tokens, finishes and the engine's stats); `step()` here receives one such message.
Commands (add, abort) are buffered and sent as one message before each receive. A request
the child rejects comes back as a finished output carrying the error; a failing step comes
back as an error that `step()` raises (AsyncEngine then fails the requests in flight). If the
child dies, every later call raises EngineError.
"""
from __future__ import annotations

import dataclasses
import logging
import multiprocessing as mp
import pickle
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hymt.engine.interface import Engine, EngineStats
from hymt.engine.outputs import RequestOutput
from hymt.engine.sampling import SamplingParams
from hymt.errors import EngineError, HymtError, ModelLoadError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EngineSpec:
    """What the child builds: `create_engine(backend, model, device=, dtype=, config=, **options)`.

    Attributes:
        backend: an engine backend name ("native", "transformers").
        model: a local checkpoint dir or hub id (the child loads it itself).
        device / dtype / config / options: as for `hymt.engine.factory.create_engine`.
        builder: instead of create_engine, a picklable zero-argument callable returning the
            Engine (tests and tools: a stand-in engine).
        log_setup: a picklable zero-argument callable that configures logging in the child
            (the server passes its JSON set-up); None: plain lines at the parent's level.
    """

    backend: str = "native"
    model: str | None = None
    device: str | None = None
    dtype: str | None = None
    config: Any = None
    options: dict = field(default_factory=dict)
    builder: Callable[[], Engine] | None = None
    log_setup: Callable[[], None] | None = None

    def build(self) -> Engine:
        if self.builder is not None:
            return self.builder()
        from hymt.engine.factory import create_engine

        return create_engine(self.backend, self.model, device=self.device, dtype=self.dtype, config=self.config,
                             **self.options)


@dataclass(frozen=True)
class _Started:
    """The child's first message: what callers read from an Engine's attributes."""

    stop_token_ids: tuple[int, ...]
    device: str | None
    memory_report: Any
    stats: EngineStats


@dataclass(frozen=True)
class _Step:
    """One child step: compact outputs (id, new ids, finish reason, times), errors of rejected adds."""

    outputs: list[tuple[str, list[int], str | None, float, float | None, float | None]]
    # (request id, new token ids: all of them for a final-only request, finish reason or None,
    #  arrival, first-token and finish times)
    rejected: list[tuple[str, BaseException]]
    stats: EngineStats
    step_error: str | None = None


class EngineProcess(Engine):
    """Runs `spec.build()` in a spawned child; blocks until it is loaded (or raises ModelLoadError)."""

    def __init__(self, spec: EngineSpec, *, start_timeout_s: float = 1800.0):
        self._inflight: dict[str, tuple[list[int], list[int]]] = {}  # id -> (prompt ids, tokens so far)
        self._commands: list[tuple] = []
        self._count = 0
        self._dead: str | None = None
        self._closed = False
        # One reader at a time: step() runs on the AsyncEngine's loop thread, stats() may be
        # called from any thread, and two readers of one pipe tear its messages apart. What
        # stats() reads waits in _pending for step(): no output is lost.
        self._reading = threading.Lock()
        self._pending: deque[_Step] = deque()
        ctx = mp.get_context("spawn")  # CUDA cannot be forked
        self._conn, child_conn = ctx.Pipe()
        self._proc = ctx.Process(target=_child_main, args=(child_conn, spec, logging.getLogger("hymt").getEffectiveLevel()),
                                 name="hymt-engine-process", daemon=True)
        self._proc.start()
        child_conn.close()
        started = self._receive(start_timeout_s, "start")
        if isinstance(started, BaseException):
            self._proc.join(10)
            if isinstance(started, HymtError):
                raise started
            raise ModelLoadError(f"the engine process could not start: {started!r}") from started
        self.backend = spec.backend
        self.stop_token_ids = started.stop_token_ids
        self.device = started.device
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
        self._commands.append(("add", request_id, prompt, params, final_only))
        return request_id

    def abort(self, request_id: str) -> None:
        """Sent at once: with nothing else in flight no step() would carry it to the child."""
        if self._inflight.pop(request_id, None) is not None:
            self._commands.append(("abort", request_id))
            if self._dead is None and not self._closed:
                self._flush()

    def has_unfinished(self) -> bool:
        return bool(self._inflight)

    def step(self) -> list[RequestOutput]:
        self._check_alive()
        self._flush()
        message = self._receive(None, "step")
        self._stats = message.stats
        outputs = [self._output(*compact) for compact in message.outputs if compact[0] in self._inflight]
        outputs += [self._rejected(rid, error) for rid, error in message.rejected if rid in self._inflight]
        if message.step_error is not None:
            raise EngineError(message.step_error)
        return outputs

    def stats(self) -> EngineStats:
        """The child's counters as of its last message. Messages waiting in the pipe (an
        abort's acknowledgement while nothing else is in flight) are read here and kept for
        step(); while another thread reads the pipe (a step), the last counters stand."""
        if self._dead is not None or self._closed or not self._reading.acquire(blocking=False):
            return self._stats
        try:
            while self._conn.poll():
                message = self._conn.recv()
                self._pending.append(message)
                self._stats = message.stats
        except (EOFError, OSError):
            pass  # step() reports the dead child
        finally:
            self._reading.release()
        return self._stats

    @property
    def pid(self) -> int | None:
        """The child's process id while it runs."""
        return self._proc.pid if self._proc.is_alive() else None

    def memory_report(self) -> Any:
        return self._memory_report

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._conn.send(("close",))
        except (OSError, ValueError):
            pass
        self._proc.join(30)
        if self._proc.is_alive():
            self._proc.terminate()
            self._proc.join(5)
        self._conn.close()

    # -- internals ---------------------------------------------------------------------------
    def _output(self, rid: str, new: list[int], finish: str | None, arrival: float,
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
            self._send(("commands", commands))

    def _send(self, message: tuple) -> None:
        try:
            self._conn.send(message)
        except (OSError, ValueError) as exc:
            self._died(f"could not reach it ({exc!r})")

    def _receive(self, timeout: float | None, what: str) -> Any:
        try:
            with self._reading:
                if self._pending:
                    return self._pending.popleft()
                if timeout is not None and not self._conn.poll(timeout):
                    self._proc.terminate()
                    return TimeoutError(f"no {what} message after {timeout:.0f} s")
                return self._conn.recv()
        except (EOFError, OSError) as exc:
            self._died(f"exit code {self._proc.exitcode} ({exc!r})")

    def _died(self, why: str) -> None:
        self._dead = why
        self._inflight.clear()
        raise EngineError(f"the engine process died: {why}")

    def _check_alive(self) -> None:
        if self._closed:
            raise EngineError("the engine process is closed")
        if self._dead is not None:
            raise EngineError(f"the engine process died: {self._dead}")


# -- child -------------------------------------------------------------------------------------
def _child_main(conn: Any, spec: EngineSpec, log_level: int) -> None:
    if spec.log_setup is not None:
        spec.log_setup()
    else:
        logging.basicConfig(level=log_level,
                            format="%(asctime)s %(levelname)s %(name)s [engine pid %(process)d]: %(message)s")
    try:
        engine = spec.build()
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which raises it
        conn.send(_picklable(exc))
        return
    report = engine.memory_report() if hasattr(engine, "memory_report") else None
    device = getattr(engine, "device", None)
    conn.send(_Started(tuple(engine.stop_token_ids), str(device) if device is not None else None, report,
                       engine.stats()))
    try:
        _ChildLoop(conn, engine).run()
    finally:
        engine.close()


class _ChildLoop:
    """Applies the parent's commands between steps; steps while there is work; one message per step.

    A reader thread drains the pipe into a queue at all times, so the parent's sends never
    wait on this loop: were both sides blocked sending into full pipes, neither would read.
    """

    def __init__(self, conn: Any, engine: Engine):
        self.conn, self.engine = conn, engine
        self.rejected: list[tuple[str, BaseException]] = []
        self.final_only: set[str] = set()  # requests whose per-step outputs are not sent
        self.inbox: queue.SimpleQueue = queue.SimpleQueue()
        threading.Thread(target=self._read, name="hymt-engine-commands", daemon=True).start()

    def _read(self) -> None:
        try:
            while True:
                message = self.conn.recv()
                self.inbox.put(message)
                if message[0] == "close":
                    return
        except (EOFError, OSError):  # the parent is gone
            self.inbox.put(("close",))

    def run(self) -> None:
        while True:
            applied = self._apply(block=not self.engine.has_unfinished() and not self.rejected)
            if applied is None:
                return
            if self.engine.has_unfinished():
                self._step()
            elif self.rejected or applied:  # rejections, or fresh stats after aborts
                self._send(_Step([], self._take_rejected(), self._stats()))

    def _apply(self, *, block: bool) -> int | None:
        """Apply every waiting message; how many commands, or None once the parent said close."""
        applied = 0
        while True:
            try:
                message = self.inbox.get(block=block)
            except queue.Empty:
                return applied
            block = False
            if message[0] == "close":
                return None
            for command in message[1]:
                self._command(command)
                applied += 1

    def _command(self, command: tuple) -> None:
        if command[0] == "abort":
            self.engine.abort(command[1])
            self.final_only.discard(command[1])
            return
        _, rid, prompt, params, final_only = command
        try:
            self.engine.add_request(prompt, params, request_id=rid, final_only=final_only)
        except Exception as exc:  # noqa: BLE001 - fails only this request, in the parent
            self.rejected.append((rid, _picklable(exc)))
            return
        if final_only:
            self.final_only.add(rid)

    def _step(self) -> None:
        try:
            outputs = self.engine.step()
        except Exception as exc:  # noqa: BLE001 - the parent fails what is in flight
            log.exception("engine step failed")
            self._send(_Step([], self._take_rejected(), self._stats(), step_error=f"engine step failed: {exc!r}"))
            return
        compact = []
        for o in outputs:
            if o.request_id in self.final_only:
                if not o.finished:
                    continue
                self.final_only.discard(o.request_id)
                new = list(o.token_ids)
            else:
                new = list(o.new_token_ids)
            compact.append((o.request_id, new, o.finish_reason if o.finished else None, o.arrival_time,
                            o.first_token_time, o.finish_time))
        self._send(_Step(compact, self._take_rejected(), self._stats()))

    def _stats(self) -> EngineStats:
        """The engine's counters and this process's CPU time (which the parent cannot see)."""
        return dataclasses.replace(self.engine.stats(), engine_process_cpu_seconds=time.process_time())

    def _take_rejected(self) -> list[tuple[str, BaseException]]:
        rejected, self.rejected = self.rejected, []
        return rejected

    def _send(self, message: _Step) -> None:
        self.conn.send(message)


def _picklable(exc: BaseException) -> BaseException:
    """`exc` if it survives pickling (hymt's errors do), else an EngineError with its text."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001
        return EngineError(f"{type(exc).__name__}: {exc}")
