"""The uvicorn server of one HTTP process of `hymt serve`, and the socket it listens on.

`hymt serve` runs one such process (hymt/cli/serve_cmd.py) or, with --http-workers N, N of
them in front of one engine (hymt/server/http_workers.py); either way each builds its
server here, so that the limits, the protocol and the drain are the same.
"""
from __future__ import annotations

import logging
import os
import socket
import threading
import time

import uvicorn
from fastapi import FastAPI

from hymt.errors import InvalidInputError
from hymt.server.http_protocol import protocol_class
from hymt.server.service import ModelService
from hymt.server.settings import ServerSettings
from hymt.server.shutdown import UVICORN_GRACE_S, DrainingServer
from hymt.server.supervisor import EXIT_LOAD_FAILED

logger = logging.getLogger(__name__)

#: Pending connections per listening socket (uvicorn's default).
BACKLOG = 2048
#: How often a worker looks whether the process that started it is still there.
_PARENT_POLL_S = 1.0


def draining_server(app: FastAPI, settings: ServerSettings) -> DrainingServer:
    """uvicorn over `app` with the settings' limits; SIGTERM drains (hymt/server/drain.py)."""
    # log_config=None: uvicorn's loggers keep the handler configure_logging gave them. Its own
    # access log is off: hymt.access writes structured lines without bodies or query strings.
    config = uvicorn.Config(app, host=settings.host, port=settings.port, log_level=settings.log_level,
                            log_config=None, access_log=False, http=protocol_class(settings),
                            timeout_keep_alive=settings.keep_alive_timeout,  # type: ignore[arg-type]
                            limit_concurrency=settings.max_connections,
                            timeout_graceful_shutdown=UVICORN_GRACE_S)  # type: ignore[arg-type]
    return DrainingServer(config, app.state.hymt.drain)


def stop_when_given_up(service: ModelService, server: uvicorn.Server, keep_serving_on_load_error: bool,
                       parent_pid: int | None = None) -> threading.Thread:
    """A thread that asks uvicorn to stop once the model supervisor gives up (a failed load,
    unless the flag keeps the server up to report it, or an engine that could not be
    restarted) or, given `parent_pid`, once that process is gone (a worker's parent killed)."""

    supervisor = service.supervisor

    def stops() -> bool:
        return supervisor.gave_up.is_set() and not (
            supervisor.exit_status == EXIT_LOAD_FAILED and keep_serving_on_load_error)

    def watch() -> None:
        if parent_pid is None:
            supervisor.gave_up.wait()
        else:
            while not stops() and os.getppid() == parent_pid:
                time.sleep(_PARENT_POLL_S)
            if not stops():
                logger.error("the parent process %d is gone: stopping", parent_pid)
        if stops() or parent_pid is not None:
            server.should_exit = True

    thread = threading.Thread(target=watch, name="hymt-exit-watch", daemon=True)
    thread.start()
    return thread


def reuse_port_socket(host: str, port: int, *, listen: bool) -> socket.socket:
    """A TCP socket bound to host:port with SO_REUSEPORT: every HTTP worker binds its own and
    the kernel spreads new connections over those that listen. listen=False only holds the
    port (port 0: picks the one the workers then bind), taking no connections itself."""
    if not hasattr(socket, "SO_REUSEPORT"):
        raise InvalidInputError("--http-workers above 1 needs SO_REUSEPORT (Linux, macOS, BSD)",
                                field="http_workers")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
        if listen:
            sock.listen(BACKLOG)
        sock.set_inheritable(True)
    except BaseException:
        sock.close()
        raise
    return sock
