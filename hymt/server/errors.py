"""ApiError and the error body each protocol's clients parse (docs/reference/protocols.md §3).

Handlers raise `ApiError` with hymt's own status and type; `render_error` turns it into the
protocol's shape and status code (LibreTranslate clients expect 400 where hymt says 413/422,
DeepL clients 403 where hymt says 401, ...). FastAPI's default `{"detail": ...}` body never
reaches a client: every exception handler here renders through the request's protocol.

What a client reads is written for clients: engine faults and unexpected errors answer a
fixed sentence with an error id, and the server log has the exception under the same id
(one line); no body carries exception class names or filesystem paths (`public_text`).
"""
from __future__ import annotations

import logging
import re
import secrets
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hymt.errors import EngineError, InvalidInputError, UnknownLanguageError
from hymt.languages import supported_codes

logger = logging.getLogger(__name__)

PROTOCOLS = ("native", "openai", "libretranslate", "deepl", "deeplx", "immersive")

# Path prefixes -> protocol, longest first; root /translate is sniffed by its handler.
_PREFIXES = (
    ("/api/", "native"),
    ("/v1/chat/", "openai"),
    ("/v1/completions", "openai"),
    ("/v1/models", "openai"),
    ("/v1/translate", "deeplx"),
    ("/v2/", "deepl"),
    ("/v3/", "deepl"),
    ("/deepl/", "deepl"),
    ("/deeplx", "deeplx"),
    ("/imme", "immersive"),
    ("/libretranslate/", "libretranslate"),
    ("/translate", "libretranslate"),
    ("/download_file/", "libretranslate"),
    ("/detect", "libretranslate"),
    ("/languages", "libretranslate"),
)

_OPENAI_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "invalid_request_error",
    422: "invalid_request_error",
    429: "rate_limit_error",
    500: "server_error",
    503: "server_error",
    504: "timeout_error",
}


class ApiError(Exception):
    """An error answer. `status` and `type` are hymt's own; protocols may map them.

    Attributes:
        status: HTTP status in hymt's native API (400, 401, 403, 404, 413, 422, 429, 500, 503, 504).
        message: what went wrong, naming the field and the limit or valid values.
        type: a short machine-readable kind ("invalid_value", "invalid_type", "too_large",
            "queue_full", "not_ready", "timeout", "engine_error", "unauthorized", ...).
        field: the request field at fault, when one is.
        valid: the valid values of that field, when they are a short list.
        headers: extra response headers (Retry-After).
    """

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str = "invalid_value",
        field: str | None = None,
        valid: Sequence[str] | None = None,
        headers: dict[str, str] | None = None,
    ):
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.field = field
        self.valid = list(valid) if valid is not None else None
        self.headers = dict(headers or {})

    @classmethod
    def from_input_error(cls, exc: InvalidInputError, field: str | None = None) -> ApiError:
        """A 400 from a library-level InvalidInputError (unknown language, bad template, ...)."""
        valid = list(supported_codes()) if isinstance(exc, UnknownLanguageError) else None
        kind = "unknown_language" if isinstance(exc, UnknownLanguageError) else "invalid_value"
        return cls(400, str(exc), type=kind, field=field or exc.field, valid=valid)


# An absolute POSIX or Windows path (not a URL's `//host/...`): its folders are dropped.
_PATH = re.compile(r"(?<![\w:/.~-])(?:[A-Za-z]:\\|/)(?:[^\s/\\'\"]+[/\\])+(?=[^\s/\\'\"]*)")


def public_text(text: str) -> str:
    """`text` without the folders of any absolute path in it (a checkpoint at
    /home/me/models/x is reported as .../x): what error bodies and /ready may show."""
    return _PATH.sub(".../", text)


def incident(kind: str, exc: BaseException, where: str) -> ApiError:
    """A 500 for an engine fault or an unexpected error: the client gets a fixed sentence
    and an error id, the log one line with the id, the exception and where it came from."""
    error_id = secrets.token_hex(4)
    origin = _innermost_frame(exc)
    logger.error("%s %s on %s: %s: %s%s", kind, error_id, where, type(exc).__name__, exc, origin)
    logger.debug("%s %s traceback", kind, error_id, exc_info=exc)
    if kind == "engine error":
        message = f"engine error: the engine failed while serving this request (error id {error_id} in the server log)"
        return ApiError(500, message, type="engine_error")
    return ApiError(500, f"internal error: the server failed on this request (error id {error_id} in the server log)",
                    type="internal_error")


def _innermost_frame(exc: BaseException) -> str:
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return ""
    return f" (at {tb.tb_frame.f_code.co_filename}:{tb.tb_lineno})"


@contextmanager
def library_errors(where: str = "a request") -> Iterator[None]:
    """The library's errors as ApiErrors (400 bad input, 500 engine fault): the one mapping."""
    try:
        yield
    except ApiError:
        raise
    except InvalidInputError as exc:
        raise ApiError.from_input_error(exc) from exc
    except EngineError as exc:
        raise incident("engine error", exc, where) from exc


def protocol_of(request: Request) -> str:
    """The protocol whose error shape this request gets (a handler may set it explicitly)."""
    return protocol_of_scope(request.scope)


def protocol_of_scope(scope: Scope) -> str:
    """`protocol_of` from the ASGI scope alone (the access log has no Request). The raw
    path, not `request.url.path`: building the URL costs more than the rest of the lookup,
    and its escaping (`?`, `#`, `\\`) never touches one of _PREFIXES."""
    explicit = scope.get("hymt.protocol")
    if explicit:
        return explicit
    return protocol_of_path(scope["path"])


def protocol_of_path(path: str) -> str:
    """The protocol a path belongs to (root /translate: LibreTranslate's, its default)."""
    for prefix, protocol in _PREFIXES:
        if path.startswith(prefix):
            return protocol
    return "native"


def set_protocol(request: Request, protocol: str) -> None:
    """Pin the protocol of a request (root /translate decides it from the body)."""
    request.scope["hymt.protocol"] = protocol


def render_error(protocol: str, err: ApiError) -> JSONResponse:
    """The error response in `protocol`'s shape and status code."""
    status, body = _shape(protocol, err)
    return JSONResponse(body, status_code=status, headers=err.headers)


def wire_status(protocol: str, status: int) -> int:
    """The status code `protocol`'s clients get for hymt's `status` (the OpenAPI document's)."""
    return _shape(protocol, ApiError(status, ""))[0]


def _shape(protocol: str, err: ApiError) -> tuple[int, object]:
    status = err.status
    if protocol == "openai":
        status = 400 if status == 422 else status
        code = "invalid_api_key" if err.status == 401 else err.type
        return status, {
            "error": {"message": err.message, "type": _OPENAI_TYPES.get(status, "server_error"),
                      "param": err.field, "code": code}
        }
    if protocol == "libretranslate":
        # LibreTranslate answers 400 for every input problem, 400 missing / 403 bad key.
        if status in (413, 422):
            status = 400
        if status == 401:
            status = 400 if err.type == "missing_key" else 403
        return status, {"error": err.message}
    if protocol == "deepl":
        status = {401: 403, 422: 400}.get(status, status)
        return status, {"message": err.message}
    if protocol == "deeplx":
        status = 400 if status == 422 else status
        return status, {"code": status, "message": err.message}
    if protocol == "immersive":
        status = 400 if status == 422 else status
        return status, {"error": err.message, "code": status}
    body: dict[str, object] = {"message": err.message, "type": err.type, "field": err.field}
    if err.valid is not None:
        body["valid"] = err.valid
    return status, {"error": body}


def install_error_handlers(app: FastAPI) -> None:
    """Render every error, FastAPI's own included, in the request's protocol shape."""

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        return render_error(protocol_of(request), exc)

    @app.exception_handler(InvalidInputError)
    async def _input_error(request: Request, exc: InvalidInputError) -> JSONResponse:
        return render_error(protocol_of(request), ApiError.from_input_error(exc))

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = (exc.errors() or [{}])[0]
        where = ".".join(str(p) for p in first.get("loc", ()) if p not in ("body", "query"))
        message = f"{where or 'request'}: {first.get('msg', 'invalid value')}"
        return render_error(protocol_of(request), ApiError(422, message, type="invalid_type", field=where or None))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        kinds = {404: "not_found", 405: "method_not_allowed"}
        message = {404: f"no route {request.url.path}", 405: f"{request.method} is not allowed on {request.url.path}"}
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            methods = allowed_methods(app.router.routes, request.scope)
            headers["Allow"] = ", ".join(methods)
            message[405] += f"; allowed: {', '.join(methods)}"
        err = ApiError(
            exc.status_code,
            message.get(exc.status_code, str(exc.detail)),
            type=kinds.get(exc.status_code, "http_error"),
            headers=headers,
        )
        return render_error(protocol_of(request), err)

    @app.exception_handler(EngineError)
    async def _engine(request: Request, exc: EngineError) -> JSONResponse:
        return render_error(protocol_of(request), incident("engine error", exc, request.url.path))


_METHODS = ("DELETE", "GET", "HEAD", "PATCH", "POST", "PUT")


def allowed_methods(routes: Sequence[BaseRoute], scope: Scope) -> list[str]:
    """Every method some route serves at this path (the Allow header of a 405): routes that
    share a path (GET and POST /v2/glossaries) each know only their own. Each method is
    tried against the routes (included routers answer only for a whole match)."""
    return [method for method in _METHODS
            if any(route.matches({**scope, "method": method})[0] is Match.FULL for route in routes)]


class UnhandledErrorMiddleware:
    """The last resort: an exception no handler took becomes a 500 in the request's protocol
    shape, logged in one line (`incident`), and the connection stays usable. (Starlette's
    own catch-all re-raises after answering, so uvicorn logs the traceback again and closes
    the connection.) Once the response has started nothing can be sent: it is re-raised."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def send_wrapper(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        except Exception as exc:
            if started:
                raise
            err = incident("unexpected error", exc, f"{scope['method']} {scope['path']}")
            await render_error(protocol_of_scope(scope), err)(scope, receive, send)
