"""Request bodies bounded before anyone reads them: size (413) and time (408).

Pure ASGI, outside routing, authentication and parsing. A declared `Content-Length` over
`--max-body-bytes` is answered at once, the body unread; a body without one (chunked) is
counted as it arrives and refused once it passes the limit, so at most the limit is ever
held in memory. A body that takes longer than `--body-timeout` to arrive (a slow or stalled
sender holding a connection and a task) is answered 408.

What is left of a refused body: uvicorn reads and drops a declared length after the answer
(the client, which may still be sending, then reads a clean 413 on a connection that stays
usable); past `DISCARD_LIMIT_BYTES`, and for an undeclared (chunked) length, the answer
closes the connection instead.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hymt.server.errors import ApiError, protocol_of_scope, render_error

#: A refused body up to this size is read and dropped to keep the connection; larger ones close it.
DISCARD_LIMIT_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class BodyLimit:
    """What a body may hold, how long it may take, and what a refusal names."""

    max_bytes: int
    timeout: float
    field: str = "body"
    flag: str = "--max-body-bytes"


class BodyTooLarge(ApiError):
    def __init__(self, limit: BodyLimit, size: int | None, close: bool):
        got = f"{size} bytes" if size is not None else "more"
        super().__init__(413, f"the request body has {got}; the limit is {limit.max_bytes} bytes ({limit.flag})",
                         type="too_large", field=limit.field, headers={"Connection": "close"} if close else None)


class BodyTimeout(ApiError):
    def __init__(self, timeout: float):
        super().__init__(408, f"the request body did not arrive within {timeout:g} s (--body-timeout)",
                         type="timeout", field="body", headers={"Connection": "close"})


#: POST paths that take a document upload: their bodies are capped by --max-file-mb instead
#: (the upload reader counts the file's bytes itself and answers in the route's own terms).
UPLOAD_PATHS = frozenset({"/api/documents", "/v2/document", "/deepl/v2/document", "/translate_file",
                          "/libretranslate/translate_file"})
#: Multipart fields and boundaries beside the file itself.
UPLOAD_ROOM_BYTES = 1 << 20
#: The least time an upload may take to arrive (a large file on a slow link).
UPLOAD_TIMEOUT_S = 300.0


class BodyLimitMiddleware:
    """Caps every request body at `max_bytes` and `timeout` seconds; document uploads at
    `upload_bytes` (plus room for the other fields) and at least UPLOAD_TIMEOUT_S."""

    def __init__(self, app: ASGIApp, max_bytes: int, timeout: float, upload_bytes: int | None = None):
        self.app = app
        self.max_bytes = max_bytes
        self.timeout = timeout
        self.upload_bytes = upload_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self._limit(scope)
        declared = Headers(scope=scope).get("content-length")
        size: int | None = None
        if declared is not None:
            try:
                size = int(declared)
            except ValueError:
                size = None
            if size is not None and size > limit.max_bytes:
                err = BodyTooLarge(limit, size, close=size > DISCARD_LIMIT_BYTES)
                await render_error(protocol_of_scope(scope), err)(scope, receive, send)
                return
        await self.app(scope, _BoundedReceive(receive, limit), send)

    def _limit(self, scope: Scope) -> BodyLimit:
        if self.upload_bytes is not None and scope.get("method") == "POST" and scope["path"] in UPLOAD_PATHS:
            return BodyLimit(self.upload_bytes + UPLOAD_ROOM_BYTES, max(self.timeout, UPLOAD_TIMEOUT_S),
                             field="file", flag="--max-file-mb")
        return BodyLimit(self.max_bytes, self.timeout)


class _BoundedReceive:
    """`receive` that counts body bytes and bounds the wait for them."""

    def __init__(self, receive: Receive, limit: BodyLimit):
        self._receive = receive
        self._limit = limit
        self._deadline = asyncio.get_running_loop().time() + limit.timeout
        self._read = 0
        self._complete = False

    async def __call__(self) -> Message:
        if self._complete:  # the body is in: what follows is a disconnect, whenever it comes
            return await self._receive()
        try:
            async with asyncio.timeout_at(self._deadline):
                message = await self._receive()
        except TimeoutError:
            raise BodyTimeout(self._limit.timeout) from None
        if message["type"] != "http.request":
            return message
        self._read += len(message.get("body", b""))
        if self._read > self._limit.max_bytes:
            raise BodyTooLarge(self._limit, None, close=True)
        self._complete = not message.get("more_body", False)
        return message
