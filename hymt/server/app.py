"""create_app: one FastAPI app, one model, every protocol (docs/reference/protocols.md §6 routing).

    /health /ready /metrics /            liveness, readiness, Prometheus, web UI (auth.py: key policy)
    /api/...                             hymt's native API (the web UI uses only this)
    /api/documents/...                   document jobs (upload, progress, result)
    /v1/chat/completions /v1/models      OpenAI (+ /v1/completions, the vLLM shape)
    /translate /languages /detect        LibreTranslate (root /translate sniffs DeepLX, Immersive)
    /libretranslate/...                  LibreTranslate under its own prefix
    /translate_file /download_file/...   LibreTranslate file translation (also under /libretranslate)
    /v2/... /deepl/v2/...                DeepL v2 subset (+ glossaries in SQLite, /v2/document)
    /v3/glossaries                       DeepL v3 multilingual glossaries
    /deeplx/translate /v1/translate      DeepLX
    /imme                                Immersive Translate custom API
"""
from __future__ import annotations

import inspect
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles

from hymt.server import documents_api, native_api
from hymt.server.admission import Admission, ClientGone
from hymt.server.auth import has_key, require_key
from hymt.server.body_limits import BodyLimitMiddleware
from hymt.server.cors import CorsMiddleware
from hymt.server.drain import Drain
from hymt.server.errors import UnhandledErrorMiddleware, install_error_handlers
from hymt.server.jobs.runner import JobRunner
from hymt.server.logging import AccessMiddleware
from hymt.server.metrics import ModelState, QueueState, ServerMetrics
from hymt.server.openapi import install_openapi
from hymt.server.origins import is_loopback_host
from hymt.server.protocols import (
    completions_api,
    deepl_api,
    deepl_documents,
    deeplx_api,
    immersive_api,
    libretranslate_api,
    libretranslate_files,
    openai_api,
    root_translate,
)
from hymt.server.service import RESTART_RETRY_AFTER_S, ModelService, TranslatorFactory
from hymt.server.settings import ServerSettings
from hymt.server.state import ServerState

STATIC_DIR = Path(__file__).parent / "static"

_PLACEHOLDER = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>hymt</title></head>
<body><h1>hymt</h1><p>The web UI is not installed (hymt/server/static/ is missing).
The APIs are up: <a href="/api/status">/api/status</a>, <a href="/docs">/docs</a>.</p></body></html>"""

# /metrics and the access log already cover requests; FastAPI >= 0.16x would also look up
# OpenTelemetry providers (environment reads) on every request (2 % of the server's CPU in an
# H200 profile). Older FastAPI has no such option.
_NO_OPENTELEMETRY: dict[str, Any] = (
    {"telemetry": {"tracing": False, "metrics": False, "logs": False}}
    if "telemetry" in inspect.signature(FastAPI.__init__).parameters else {}
)


def create_app(settings: ServerSettings | None = None, *, translator_factory: TranslatorFactory | None = None,
               load: bool = True) -> FastAPI:
    """The server app. The model loads in the background when the app starts (lifespan).

    Args:
        settings: the server configuration (defaults: ServerSettings()).
        translator_factory: builds the Translator from the settings (tests pass a stand-in).
        load: start loading at startup; False leaves the service unloaded (503 everywhere).
    """
    settings = settings or ServerSettings()
    service = ModelService(settings, translator_factory)
    admission = Admission(settings.max_queue, settings.retry_after_s)
    drain = Drain(admission, settings.drain_timeout, on_start=service.supervisor.hold)
    metrics = ServerMetrics(
        service.stats,
        lambda: QueueState(admission.active, admission.requests, admission.limit, drain.draining),
        lambda: ModelState(service.phase, service.supervisor.events),
    )
    jobs = JobRunner(settings, service, admission)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if load:
            service.start()
        jobs.start()  # resumes the jobs a stopped or killed server left
        try:
            yield
        finally:
            await jobs.close()
            service.close()

    app = FastAPI(title="hymt", version=_version(), lifespan=lifespan, **_NO_OPENTELEMETRY)
    app.state.hymt = ServerState(settings=settings, service=service, admission=admission, metrics=metrics,
                                 drain=drain)
    app.state.settings = settings
    app.state.jobs = jobs
    install_error_handlers(app)

    @app.exception_handler(ClientGone)
    async def _client_gone(request: Request, exc: ClientGone) -> Response:
        return Response(status_code=499)  # nginx's "client closed request": nobody reads it

    _add_open_routes(app)
    app.include_router(native_api.router)
    app.include_router(documents_api.router)
    app.include_router(openai_api.router)
    app.include_router(completions_api.router)
    for prefix in ("", "/libretranslate"):
        app.include_router(libretranslate_api.build_router(prefix))
        app.include_router(libretranslate_files.build_router(prefix))
    app.include_router(root_translate.router)
    for prefix in ("", "/deepl"):
        app.include_router(deepl_api.build_router(prefix))
        app.include_router(deepl_documents.build_router(prefix))
    app.include_router(deeplx_api.router)
    app.include_router(immersive_api.router)
    if STATIC_DIR.is_dir():
        app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")

    install_openapi(app)
    # Outermost last: access log -> CORS and the cross-site guard -> the last-resort 500 ->
    # body limits -> routing. Everything a client may be refused for comes before any body is read.
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes, timeout=settings.body_timeout,
                       upload_bytes=settings.max_file_bytes)
    app.add_middleware(UnhandledErrorMiddleware)
    app.add_middleware(CorsMiddleware, origins=settings.cors_origins, loopback_only=is_loopback_host(settings.host))
    app.add_middleware(AccessMiddleware, metrics=metrics)
    return app


def _add_open_routes(app: FastAPI) -> None:
    """Liveness, readiness, metrics, the UI: reachable without a key, details aside (auth.py)."""

    @app.get("/health", tags=["server"])
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/ready", tags=["server"])
    async def ready(request: Request) -> JSONResponse:
        st: ServerState = request.app.state.hymt
        status = st.serving_status()
        body: dict[str, Any] = {"status": status, "ready": status == "ready"}
        if has_key(request):
            body.update(st.service.info())
            if status != "ready":
                body["error"] = st.service.public_error
        if status == "ready":
            return JSONResponse(body)
        retry = {"restarting": RESTART_RETRY_AFTER_S, "failed": 30}.get(status, st.settings.retry_after_s)
        return JSONResponse(body, status_code=503, headers={"Retry-After": str(retry)})

    @app.get("/metrics", tags=["server"], dependencies=[Depends(require_key)])
    async def metrics(request: Request) -> Response:
        st: ServerState = request.app.state.hymt
        return Response(st.metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8")

    @app.get("/", include_in_schema=False)
    async def index() -> Response:
        page = STATIC_DIR / "index.html"
        if page.is_file():
            return FileResponse(page, media_type="text/html")
        return HTMLResponse(_PLACEHOLDER)


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("hymt")
    except Exception:  # running from a source tree without install
        return "0"
