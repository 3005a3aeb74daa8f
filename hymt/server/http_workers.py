"""`hymt serve --http-workers N`: N HTTP worker processes in front of one engine process.

One HTTP process spends 1.7-2.1 ms of CPU per request (FastAPI, segmenting, tokenizing,
templates, quality checks) and is a full core at a few hundred clients, below what one GPU
engine can serve. Here that work is spread over N processes:

    parent (this module)      owns the port, the engine and the workers; serves nothing itself
      engine child            EngineProcess(listen=address): one engine, one batch for all
      worker 1..N             hymt/server/http_worker.py: the whole app over an EngineClient,
                              uvicorn on its own SO_REUSEPORT socket of the same port

The parent holds the port (bound, not listening: port 0 picks one for all), loads the engine
with the ModelSupervisor a single server uses (the same restart policy, --engine-restarts and
exit statuses), and starts the workers; the kernel spreads new connections over the workers.
An engine that dies is restarted on the same socket path and the workers reconnect; a worker
that dies is started again. SIGTERM or Ctrl-C drains every worker (one SIGTERM each), then
closes the engine: exit 0; a second signal cuts the drain short.
"""
from __future__ import annotations

import dataclasses
import functools
import logging
import multiprocessing as mp
import os
import shutil
import signal
import time
from collections.abc import Callable
from ctypes import Array, c_long
from dataclasses import dataclass
from multiprocessing.process import BaseProcess
from types import FrameType

from hymt.engine.process_messages import EngineAddress
from hymt.errors import InvalidInputError
from hymt.server.http_server import reuse_port_socket
from hymt.server.http_worker import WorkerSpec, worker_main, write_engine_failure
from hymt.server.service import ServedModel, default_factory
from hymt.server.settings import ServerSettings
from hymt.server.shutdown import UVICORN_GRACE_S
from hymt.server.supervisor import EXIT_LOAD_FAILED, ModelSupervisor
from hymt.translate.translator import Translator

logger = logging.getLogger(__name__)

#: Builds the engine's owner in the parent: a Translator (or ServedModel) whose engine child
#: listens at the address (default_factory; tools pass a stand-in engine).
EngineOwnerFactory = Callable[[ServerSettings, EngineAddress], "Translator | ServedModel"]
#: How often the parent looks at its workers and the engine's supervisor.
POLL_S = 0.1
#: A worker that dies is started again, at most this often.
RESTART_EVERY_S = 1.0
#: Beyond the drain and uvicorn's grace, how long a worker may take to exit before it is killed.
_EXIT_MARGIN_S = 10.0


@dataclass(frozen=True)
class ServeOutcome:
    """How the server ended: its exit status, and why when it is not 0 (operator text)."""

    status: int
    error: str | None = None


def serve_workers(settings: ServerSettings, workers: int, *, keep_serving_on_load_error: bool = False,
                  log_format: str | None = None, factory: EngineOwnerFactory | None = None) -> ServeOutcome:
    """Serve until SIGTERM / Ctrl-C (status 0) or until the engine is given up (1, 3)."""
    if workers < 2:
        raise InvalidInputError(f"http_workers must be >= 2 here, got {workers}", field="http_workers")
    if settings.engine == "openai" or not settings.engine_process:
        raise InvalidInputError("--http-workers above 1 shares one engine process between the workers: it needs "
                                "a local engine (native, transformers) without --engine-in-process",
                                field="http_workers")
    address = EngineAddress.private()
    port_holder = reuse_port_socket(settings.host, settings.port, listen=False)
    try:
        settings = dataclasses.replace(settings, port=port_holder.getsockname()[1])
        build: Callable[[ServerSettings], Translator | ServedModel] = (
            functools.partial(default_factory, listen=address) if factory is None
            else lambda server_settings: factory(server_settings, address))
        return _HttpWorkers(settings, workers, address, build, keep_serving_on_load_error, log_format).run()
    finally:
        port_holder.close()
        shutil.rmtree(address.directory, ignore_errors=True)


class _HttpWorkers:
    """The parent's loop: the engine's supervisor, the workers, the signals."""

    def __init__(self, settings: ServerSettings, workers: int, address: EngineAddress,
                 build: Callable[[ServerSettings], Translator | ServedModel], keep_serving_on_load_error: bool,
                 log_format: str | None):
        self.settings, self.address = settings, address
        self.keep_serving = keep_serving_on_load_error
        self.log_format = log_format
        self.ctx = mp.get_context("spawn")
        # The pids of every HTTP process (this one first) for the workers' CPU metric.
        self.pids: Array[c_long] = self.ctx.RawArray(c_long, workers + 1)
        self.pids[0] = os.getpid()
        self.procs: list[BaseProcess | None] = [None] * workers
        self.started_at = [0.0] * workers
        # The engine in its child, as a single server supervises it; workers warm up themselves.
        self.supervisor = ModelSupervisor(dataclasses.replace(settings, warmup=False), build)
        self.signals = 0

    def run(self) -> ServeOutcome:
        previous = {sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            self.supervisor.start()
            for index in range(len(self.procs)):
                self._start(index)
            logger.info("%d HTTP workers on http://%s:%d share one engine process", len(self.procs),
                        self.settings.host, self.settings.port)
            return self._serve()
        finally:
            self._stop()
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            self.supervisor.close()

    def _serve(self) -> ServeOutcome:
        reported = False
        while self.signals == 0:
            time.sleep(POLL_S)
            sup = self.supervisor
            if sup.gave_up.is_set() and not reported:
                write_engine_failure(self.address, sup.reason or "the engine could not be loaded")
                if sup.exit_status != EXIT_LOAD_FAILED or not self.keep_serving:
                    return ServeOutcome(sup.exit_status, sup.reason)
                reported = True
            self._restart_dead()
        return ServeOutcome(0)

    def _start(self, index: int) -> None:
        spec = WorkerSpec(self.settings, index + 1, self.address, self.keep_serving, self.log_format)
        proc = self.ctx.Process(target=worker_main, args=(spec, self.pids), name=f"hymt-http-worker-{index + 1}")
        proc.start()
        self.procs[index], self.started_at[index] = proc, time.monotonic()
        self.pids[index + 1] = proc.pid or 0

    def _restart_dead(self) -> None:
        for index, proc in enumerate(self.procs):
            if proc is None or proc.exitcode is None:
                continue
            if time.monotonic() - self.started_at[index] < RESTART_EVERY_S:
                continue
            logger.error("HTTP worker %d (pid %s) exited with status %s; starting another", index + 1, proc.pid,
                         proc.exitcode)
            self.pids[index + 1] = 0
            self._start(index)

    def _stop(self) -> None:
        """Drain every worker (SIGTERM), cut them short on a further signal, kill stragglers."""
        self.supervisor.hold()  # a dead engine now stays dead
        signals = self.signals
        live = [p for p in self.procs if p is not None and p.exitcode is None]
        logger.info("stopping %d HTTP workers", len(live))
        _signal_all(live, signal.SIGTERM)
        deadline = time.monotonic() + self.settings.drain_timeout + UVICORN_GRACE_S + _EXIT_MARGIN_S
        while any(p.exitcode is None for p in live) and time.monotonic() < deadline:
            if self.signals > signals:  # Ctrl-C again: the workers stop at once
                signals = self.signals
                _signal_all(live, signal.SIGINT)
            time.sleep(POLL_S)
        for proc in live:
            if proc.exitcode is None:
                logger.warning("HTTP worker pid %s did not exit in time: killed", proc.pid)
                proc.kill()
            proc.join(5)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if self.signals == 0:
            logger.info("received %s: draining the HTTP workers", signal.Signals(signum).name)
        self.signals += 1


def _signal_all(procs: list[BaseProcess], sig: int) -> None:
    for proc in procs:
        if proc.exitcode is None and proc.pid is not None:
            try:
                os.kill(proc.pid, sig)
            except ProcessLookupError:
                pass
