"""CORS on every response, and preflights that browser extensions and HTTPS pages pass.

Pure ASGI. Preflights (`OPTIONS` with `Access-Control-Request-Method`) are answered here,
before auth: browsers never send credentials on them. They carry
`Access-Control-Allow-Private-Network: true`, which a public HTTPS page needs to call a
server on 127.0.0.1 or the LAN (docs/reference/protocols.md §7).
"""
from __future__ import annotations

from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

ALLOW_METHODS = "GET, POST, PUT, DELETE, OPTIONS"
DEFAULT_ALLOW_HEADERS = "Authorization, Content-Type, X-API-Key, Accept, X-Requested-With"
EXPOSE_HEADERS = "Retry-After, X-Hymt-Prompt-Guard, X-Hymt-Prompt-Kind"


class CorsMiddleware:
    """Adds CORS headers for allowed origins ("*" allows any)."""

    def __init__(self, app: ASGIApp, origins: tuple[str, ...]):
        self.app = app
        self.any_origin = "*" in origins
        self.origins = frozenset(o.rstrip("/") for o in origins if o != "*")

    def allow_origin(self, origin: str | None) -> str | None:
        if origin is None:
            return "*" if self.any_origin else None
        if self.any_origin or origin.rstrip("/") in self.origins:
            return origin
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        origin = headers.get("origin")
        allowed = self.allow_origin(origin)
        if scope["method"] == "OPTIONS" and "access-control-request-method" in headers:
            await self._preflight(headers, allowed)(scope, receive, send)
            return

        async def send_wrapper(message: Message) -> None:
            if message["type"] == "http.response.start" and allowed is not None:
                out = MutableHeaders(scope=message)
                out["Access-Control-Allow-Origin"] = allowed
                out["Access-Control-Expose-Headers"] = EXPOSE_HEADERS
                if allowed != "*":
                    out.add_vary_header("Origin")
            await send(message)

        await self.app(scope, receive, send_wrapper)

    def _preflight(self, headers: Headers, allowed: str | None) -> Response:
        if allowed is None:
            return Response("origin not allowed", status_code=403, media_type="text/plain")
        out = {
            "Access-Control-Allow-Origin": allowed,
            "Access-Control-Allow-Methods": ALLOW_METHODS,
            "Access-Control-Allow-Headers": headers.get("access-control-request-headers") or DEFAULT_ALLOW_HEADERS,
            "Access-Control-Allow-Private-Network": "true",
            "Access-Control-Max-Age": "600",
        }
        if allowed != "*":
            out["Vary"] = "Origin"
        return Response(status_code=204, headers=out)
