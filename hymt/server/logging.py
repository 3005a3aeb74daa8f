"""Server logs in one format (text or JSON lines, every logger) and request metrics.

`configure_logging` routes every logger (uvicorn's included) through one handler: text on a
terminal, JSON lines otherwise (--log-format). The access log is a pure ASGI middleware (no
BaseHTTPMiddleware: that one breaks streaming disconnect detection). It records method,
path (never the query string: it may carry `?token=`), status, milliseconds and protocol;
request bodies are never logged.
"""
from __future__ import annotations

import json
import logging
import os
import sys
import time
from typing import TextIO

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hymt.errors import InvalidInputError
from hymt.server.errors import protocol_of_scope
from hymt.server.metrics import ServerMetrics

access_logger = logging.getLogger("hymt.access")


#: Log line formats of `hymt serve --log-format`.
LOG_FORMATS = ("text", "json")
#: Environment variable naming the log format; configure_logging exports its choice there, so
#: that the engine's child process (spawned later, same environment) writes the same lines.
LOG_FORMAT_ENV = "HYMT_LOG_FORMAT"
#: Loggers the server's level applies to; everyone else's records pass at WARNING and above.
SERVER_LOGGERS = ("hymt", "uvicorn")


class JsonFormatter(logging.Formatter):
    """Formats records as one JSON object per line; `extra={"access": {...}}` fields are merged."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "ts": round(record.created, 3),
            "level": record.levelname.lower(),
            "logger": record.name,
        }
        access = getattr(record, "access", None)
        if isinstance(access, dict):
            entry.update(access)
        else:
            entry["message"] = record.getMessage()
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """One readable line per record: time, level, logger, message; an access record reads
    `POST /api/translate 200 12.3 ms native`."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)-7s %(name)s: %(message)s", datefmt="%Y-%m-%d %H:%M:%S")

    def formatMessage(self, record: logging.LogRecord) -> str:
        access = getattr(record, "access", None)
        if isinstance(access, dict):
            record.message = (f"{access.get('method')} {access.get('path')} {access.get('status')} "
                              f"{access.get('ms')} ms {access.get('protocol')}")
        return super().formatMessage(record)


def resolve_log_format(log_format: str | None, stream: TextIO) -> str:
    """`log_format` if given, else $HYMT_LOG_FORMAT, else text on a terminal and JSON otherwise
    (a file or a log collector)."""
    chosen = log_format or os.environ.get(LOG_FORMAT_ENV, "").strip().lower() or None
    if chosen is None:
        chosen = "text" if stream.isatty() else "json"
    if chosen not in LOG_FORMATS:
        raise InvalidInputError(f"log format must be one of {', '.join(LOG_FORMATS)}, got {chosen!r}",
                                field="log_format")
    return chosen


def configure_logging(level: str, log_format: str | None = None) -> str:
    """Every logger (hymt's, uvicorn's, libraries') writes through one stderr handler in one
    format; hymt and uvicorn at `level`, others at WARNING. Returns the format chosen."""
    chosen = resolve_log_format(log_format, sys.stderr)
    os.environ[LOG_FORMAT_ENV] = chosen
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if chosen == "json" else TextFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    for name in SERVER_LOGGERS:
        logger = logging.getLogger(name)
        logger.handlers.clear()  # uvicorn's own configuration, when it ran first
        logger.setLevel(level.upper())
        logger.propagate = True
    return chosen


class AccessMiddleware:
    """Times every HTTP request, logs it as JSON and feeds the request metrics."""

    def __init__(self, app: ASGIApp, metrics: ServerMetrics):
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = {"code": 500}

        async def send_wrapper(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        finally:
            self._record(scope, status["code"], time.perf_counter() - started)

    def _record(self, scope: Scope, status: int, seconds: float) -> None:
        route = scope.get("route")
        template = getattr(route, "path", None) or ("static" if scope["path"].startswith("/static/") else "unmatched")
        protocol = protocol_of_scope(scope)
        if scope["method"] == "OPTIONS":
            template = "preflight"
        self.metrics.observe_request(protocol, template, status, seconds)
        if not access_logger.isEnabledFor(logging.INFO):
            return  # --log-level warning: skip building the record's fields
        access_logger.info(
            "access",
            extra={"access": {"method": scope["method"], "path": scope["path"], "route": template,
                              "status": status, "ms": round(seconds * 1000, 1), "protocol": protocol}},
        )
