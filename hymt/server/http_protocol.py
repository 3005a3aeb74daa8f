"""uvicorn's HTTP protocol with a deadline and a size cap on request headers.

uvicorn times out idle keep-alive connections (`--keep-alive-timeout`), but not a connection
that never sends a request, nor one that sends its headers a byte at a time (slowloris): each
holds a socket and a slot of `--max-connections` for as long as it likes, and its headers
grow in memory without bound. Here a connection gets `--header-timeout` seconds from the
moment it opens, or from the first byte of each later request, to complete the request's
headers, and at most `--max-header-bytes` of them (431 past that). The body has limits of its
own (hymt/server/body_limits.py).
"""
from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from hymt.server.settings import ServerSettings


def _closing_response(status: str, text: str) -> bytes:
    """A complete HTTP/1.1 answer that closes the connection (written before any ASGI app runs)."""
    body = text.encode()
    head = (f"HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n"
            f"content-length: {len(body)}\r\n\r\n")
    return head.encode() + body


_TOO_LARGE = _closing_response("431 Request Header Fields Too Large", "the request headers are over --max-header-bytes")
_TIMEOUT = _closing_response("408 Request Timeout", "the request headers did not arrive within --header-timeout")


class GuardedHttpProtocol(HttpToolsProtocol):
    """HttpToolsProtocol whose requests must complete their headers in time and in size."""

    header_timeout: float = 10.0
    max_header_bytes: int = 64 * 1024

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None
        self._header_bytes = 0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_header_timer()

    def data_received(self, data: bytes) -> None:
        waiting = self._header_timer is not None
        if waiting:
            self._header_bytes += len(data)
        super().data_received(data)
        # Still waiting after this chunk: the headers are not complete and have grown past the cap.
        if waiting and self._header_timer is not None and self._header_bytes > self.max_header_bytes:
            self._refuse(_TOO_LARGE)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._arm_header_timer()

    def on_headers_complete(self) -> None:
        self._disarm_header_timer()
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_timer()
        super().connection_lost(exc)

    def _arm_header_timer(self) -> None:
        if self._header_timer is None:
            self._header_bytes = 0
            self._header_timer = asyncio.get_running_loop().call_later(self.header_timeout, self._refuse, _TIMEOUT)

    def _disarm_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _refuse(self, response: bytes) -> None:
        self._disarm_header_timer()
        if not self.transport.is_closing():
            self.transport.write(response)
            self.transport.close()


def protocol_class(settings: ServerSettings) -> type[GuardedHttpProtocol]:
    """GuardedHttpProtocol with the settings' limits (uvicorn builds one per connection)."""
    return type("HymtHttpProtocol", (GuardedHttpProtocol,),
                {"header_timeout": settings.header_timeout, "max_header_bytes": settings.max_header_bytes})
