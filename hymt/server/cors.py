"""CORS for allowed browser origins, and a guard against cross-site requests that change state.

Pure ASGI, before auth and before any body is read.

- CORS: responses to an allowed origin (hymt/server/origins.py: loopback pages and browser
  extensions by default, `--cors-origins` for more) carry `Access-Control-Allow-Origin`.
  Preflights (`OPTIONS` with `Access-Control-Request-Method`) are answered here: browsers
  never send credentials on them. `Access-Control-Allow-Private-Network: true`, which a public
  HTTPS page needs to call a server on 127.0.0.1 or the LAN, is sent only to allowed origins
  that ask for it. `null` is never allowed.
- Cross-site guard: a browser sends some requests without asking first (a form post, a
  `fetch` with a text/plain body), so CORS alone would let any website a user visits drive
  their local server, even with `--cors-origins` set. A request that may change state (POST,
  PUT, PATCH, DELETE) from a browser origin that is neither allowed nor the server's own
  page is refused with 403 before it runs; and a body type no protocol reads (text/plain,
  ...) is refused with 415 whoever sends it. Clients outside a browser send no Origin and
  are not concerned.
"""
from __future__ import annotations

from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hymt.server.errors import ApiError, protocol_of_scope, render_error
from hymt.server.origins import Origin, OriginPolicy, is_loopback_host

ALLOW_METHODS = "GET, POST, PUT, PATCH, DELETE, OPTIONS"
DEFAULT_ALLOW_HEADERS = "Authorization, Content-Type, X-API-Key, Accept, X-Requested-With"
EXPOSE_HEADERS = "Retry-After, X-Hymt-Prompt-Guard, X-Hymt-Prompt-Kind"
STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
#: Body types some protocol reads: JSON (and +json types), forms (LibreTranslate, DeepL).
BODY_TYPES = ("application/json", "application/x-www-form-urlencoded", "multipart/form-data")


class CorsMiddleware:
    """CORS headers for allowed origins and the cross-site guard.

    Args:
        origins: `--cors-origins` patterns.
        loopback_only: the server listens on a loopback address. Its own page then counts as
            same-origin only under a loopback host name, so that a page of another site
            whose name was made to resolve to 127.0.0.1 (DNS rebinding) is not taken for it.
    """

    def __init__(self, app: ASGIApp, origins: tuple[str, ...], loopback_only: bool = True):
        self.app = app
        self.policy = OriginPolicy(origins)
        self.loopback_only = loopback_only

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
        if scope["method"] in STATE_CHANGING:
            refusal = self._refusal(headers, origin, allowed)
            if refusal is not None:
                await render_error(protocol_of_scope(scope), refusal)(scope, receive, send)
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

    def allow_origin(self, origin: str | None) -> str | None:
        """The Access-Control-Allow-Origin value for `origin`, or None (not allowed)."""
        if origin is None:
            return "*" if self.policy.any else None
        return origin if self.policy.allows(origin) else None

    def _refusal(self, headers: Headers, origin: str | None, allowed: str | None) -> ApiError | None:
        """Why a state-changing request may not run, or None."""
        content_type = headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type and not (content_type in BODY_TYPES or content_type.endswith("+json")):
            return ApiError(415, f"content type {content_type!r} is not accepted; send application/json "
                            "(or a form, where the protocol takes one)", type="unsupported_media_type",
                            field="content-type", valid=list(BODY_TYPES))
        if origin is not None:
            if allowed is None and not self._same_origin(origin, headers.get("host", "")):
                return ApiError(403, f"requests from the web page origin {origin!r} may not use this server; "
                                "start it with --cors-origins naming that origin to allow it",
                                type="origin_not_allowed", field="origin")
        elif headers.get("sec-fetch-site", "") == "cross-site":
            return ApiError(403, "cross-site requests from web pages may not use this server; allow their origin "
                            "with --cors-origins", type="origin_not_allowed", field="origin")
        return None

    def _same_origin(self, origin: str, host: str) -> bool:
        """The page comes from this server (its web UI)."""
        parsed = Origin.parse(origin)
        served = Origin.parse(f"{parsed.scheme}://{host}") if parsed is not None and host else None
        if parsed is None or served is None or parsed != served:
            return False
        return not self.loopback_only or is_loopback_host(served.host)

    def _preflight(self, headers: Headers, allowed: str | None) -> Response:
        if allowed is None:
            return Response("origin not allowed", status_code=403, media_type="text/plain")
        out = {
            "Access-Control-Allow-Origin": allowed,
            "Access-Control-Allow-Methods": ALLOW_METHODS,
            "Access-Control-Allow-Headers": headers.get("access-control-request-headers") or DEFAULT_ALLOW_HEADERS,
            "Access-Control-Max-Age": "600",
        }
        if headers.get("access-control-request-private-network", "").lower() == "true":
            out["Access-Control-Allow-Private-Network"] = "true"
        if allowed != "*":
            out["Vary"] = "Origin"
        return Response(status_code=204, headers=out)
