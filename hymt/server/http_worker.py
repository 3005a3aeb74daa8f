"""One HTTP worker of `hymt serve --http-workers N`: the whole app over the shared engine.

A worker is spawned by the parent (hymt/server/http_workers.py) with a WorkerSpec. It builds
the same app as a single `hymt serve` (create_app: every protocol, the web UI, its own
ModelService and admission), whose Translator runs on the parent's engine through an
EngineClient, and serves it with uvicorn on a socket of its own bound to the server's port
with SO_REUSEPORT. Its supervisor treats a lost engine as a `hymt serve` does (503 with
Retry-After, then reconnects when the parent has restarted the engine on the same address);
the parent alone counts failed restarts and decides the exit status.
"""
from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hymt.engine.process_messages import EngineAddress
from hymt.server.settings import ServerSettings

#: The file beside the engine's socket in which the parent writes why it gave the engine up
#: (it could not be loaded, or restarted): workers waiting to connect read it and stop waiting.
ENGINE_FAILED_FILE = "engine-failed"
#: A worker's own limit on engine restarts: none (the parent's --engine-restarts decides).
_UNBOUNDED_RESTARTS = 2**31


@dataclass(frozen=True)
class WorkerSpec:
    """What one worker process is started with.

    Attributes:
        settings: the server's settings (its port already resolved).
        index: the worker's number, 1..N (metrics, logs).
        engine: where the parent's engine child accepts clients.
        keep_serving_on_load_error: keep answering (503 with the reason) after a failed load.
        log_format: as `hymt serve --log-format`.
    """

    settings: ServerSettings
    index: int
    engine: EngineAddress
    keep_serving_on_load_error: bool = False
    log_format: str | None = None


def engine_failure(address: EngineAddress) -> str | None:
    """Why the parent gave the engine up, once it has said so; None before."""
    try:
        return (address.directory / ENGINE_FAILED_FILE).read_text()
    except FileNotFoundError:
        return None


def write_engine_failure(address: EngineAddress, reason: str) -> None:
    path: Path = address.directory / ENGINE_FAILED_FILE
    path.with_suffix(".tmp").write_text(reason)
    path.with_suffix(".tmp").replace(path)  # whole or not at all for a reader


def worker_main(spec: WorkerSpec, http_pids: Sequence[int]) -> None:
    """The worker process's entry point (multiprocessing spawn)."""
    # Out of the terminal's process group: Ctrl-C reaches the parent alone, which drains the
    # workers with one SIGTERM each (two signals here would cut the drain short).
    os.setpgrp()
    parent = os.getppid()
    from hymt.server.app import create_app
    from hymt.server.http_server import draining_server, reuse_port_socket, stop_when_given_up
    from hymt.server.logging import configure_logging
    from hymt.server.metrics import WorkerCollector
    from hymt.server.service import connected_factory

    settings = dataclasses.replace(spec.settings, engine_restarts=_UNBOUNDED_RESTARTS)
    configure_logging(settings.log_level, spec.log_format)
    app = create_app(settings, translator_factory=connected_factory(spec.engine, lambda: engine_failure(spec.engine)))
    app.state.hymt.metrics.registry.register(
        WorkerCollector(spec.index, lambda: [pid for pid in http_pids if pid > 0]))
    sock = reuse_port_socket(settings.host, settings.port, listen=True)
    server = draining_server(app, settings)
    service = app.state.hymt.service
    stop_when_given_up(service, server, spec.keep_serving_on_load_error, parent_pid=parent)
    server.run(sockets=[sock])
    sys.exit(service.supervisor.exit_status if service.supervisor.gave_up.is_set() else 0)
