"""Server-Sent Events: event formatting and a streaming response that always cleans up.

`EventStreamResponse` releases the request's admission slot and closes its body iterator
however the stream ends (finished, client gone, error), so an abandoned stream cancels its
engine request and frees its slot at once.
"""
from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable

from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def event(data: object, name: str | None = None) -> str:
    """One SSE event; `data` is JSON-encoded unless it is already a string."""
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    head = f"event: {name}\n" if name else ""
    return f"{head}data: {payload}\n\n"


class EventStreamResponse(StreamingResponse):
    """text/event-stream whose `on_close` runs exactly once when the response ends."""

    media_type = "text/event-stream"

    def __init__(self, body: AsyncIterator[str], on_close: Callable[[], None], headers: dict[str, str] | None = None):
        super().__init__(body, headers={**SSE_HEADERS, **(headers or {})})
        self._body = body
        self._on_close = on_close

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            try:
                aclose = getattr(self._body, "aclose", None)
                if aclose is not None:
                    await aclose()
            finally:
                self._on_close()
