"""Structured access logs (one JSON line per request) and request metrics.

A pure ASGI middleware (no BaseHTTPMiddleware: that one breaks streaming disconnect
detection). It records method, path (never the query string: it may carry `?token=`),
status, milliseconds and protocol; request bodies are never logged.
"""
from __future__ import annotations

import json
import logging
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hymt.server.errors import protocol_of_scope
from hymt.server.metrics import ServerMetrics

access_logger = logging.getLogger("hymt.access")


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


def configure_logging(level: str) -> None:
    """JSON lines on stderr for hymt's loggers; uvicorn's own access log is turned off by the CLI."""
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger("hymt")
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    root.propagate = False


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
