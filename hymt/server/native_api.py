"""hymt's own JSON API under /api: translate (one text or a batch), stream (SSE), detect,
languages, models, status. The web UI speaks only this API; `hymt bench --server` too.

Errors: {"error": {"message", "type", "field", "valid"}} with 400 (bad value), 413 (over
--max-chars / --max-batch / --max-body-bytes / the glossary limits), 422 (wrong JSON type),
429 (queue full), 503 (not ready, engine restarting, shutting down), 504 (timeout), 500
(engine fault).
"""
from __future__ import annotations

import time
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response

from hymt.languages import LANGUAGES
from hymt.server import language_codes
from hymt.server.auth import has_key, require_key
from hymt.server.body import (
    get_bool,
    get_glossary,
    get_int,
    get_object,
    get_str,
    get_strings,
    get_texts,
    read_body,
)
from hymt.server.errors import ApiError, library_errors, render_error
from hymt.server.model_work import execute, open_stream
from hymt.server.request_fields import check_limits, format_field, language, sampling_field, target_language
from hymt.server.sse import event
from hymt.server.state import state_of
from hymt.server.translation_job import TranslationJob
from hymt.translate.options import TranslateOptions
from hymt.translate.result import TranslationResult

router = APIRouter(prefix="/api")
_KEY = [Depends(require_key)]  # languages and status stay open: the web UI shows them before any key


async def parse_job(request: Request) -> tuple[TranslationJob, bool, dict[str, Any]]:
    """The native request body -> (job, text was a list, body)."""
    body = await read_body(request)
    st = state_of(request)
    texts, was_list = get_texts(body, "text")
    check_limits(texts, st.settings, field="text")
    if not any(t.strip() for t in texts):
        raise ApiError(400, "text must contain something to translate", field="text")
    glossary = get_glossary(body)
    st.service.check_glossary(glossary)
    with library_errors():
        options = TranslateOptions(
            glossary=glossary,
            context=get_str(body, "context") or None,
            style=get_str(body, "style") or None,
            template=get_str(body, "template") or None,
            format=format_field(body.get("format")),
            format_type=get_str(body, "format_type") or None,
            preferences=get_strings(body, "preferences"),
            candidates=get_strings(body, "candidates"),
            fusion=get_int(body, "fusion", 0) or 0,
            sampling=sampling_field(get_object(body, "sampling")),
            use_cache=get_bool(body, "use_cache", st.settings.cache),
            retry=get_bool(body, "retry", True),
        )
    job = TranslationJob(texts=tuple(texts), target=target_language(body.get("tgt"), "tgt"),
                         source=language(body.get("src", "auto"), "src", allow_auto=True), options=options)
    return job, was_list, body


def item_dict(result: TranslationResult, body: dict[str, Any]) -> dict[str, Any]:
    """One item of "results"."""
    src = body.get("src") if body.get("src") not in (None, "", "auto") else None
    detection = result.detection
    out: dict[str, Any] = {
        "translation": result.text,
        "src": src or (result.source.code if result.source else None),
        "tgt": body.get("tgt"),
        "usage": {"prompt_tokens": result.prompt_tokens, "completion_tokens": result.completion_tokens},
        "elapsed_ms": round(result.elapsed_s * 1000, 1),
        "cached": bool(result.cached),
        "retried": bool(result.retried),
        "issues": [str(i) for i in result.issues],
        "segments": len(result.segments),
    }
    if detection is not None:
        out["detected"] = {"language": detection.language.code if detection.language else None,
                           "confidence": detection.confidence}
    return out


def response_dict(results: list[TranslationResult], was_list: bool, body: dict[str, Any], model: str,
                  started: float) -> dict[str, Any]:
    """The whole native answer; `src` is the one detected language, or "auto" when items differ."""
    items = [item_dict(r, body) for r in results]
    sources = Counter(i["src"] for i in items)
    issues = list(dict.fromkeys(issue for i in items for issue in i["issues"]))
    return {
        "translation": [i["translation"] for i in items] if was_list else items[0]["translation"],
        "src": next(iter(sources)) if len(sources) == 1 else "auto",
        "tgt": body.get("tgt"),
        "model": model,
        "usage": {"prompt_tokens": sum(i["usage"]["prompt_tokens"] for i in items),
                  "completion_tokens": sum(i["usage"]["completion_tokens"] for i in items)},
        "elapsed_ms": round((time.perf_counter() - started) * 1000, 1),
        "cached": all(i["cached"] for i in items),
        "retried": any(i["retried"] for i in items),
        "issues": issues,
        "results": items,
    }


@router.post("/translate", dependencies=_KEY)
async def translate(request: Request) -> JSONResponse:
    started = time.perf_counter()
    job, was_list, body = await parse_job(request)
    st = state_of(request)
    results = await execute(request, lambda: st.service.translate(job), texts=len(job.texts))
    st.metrics.observe_results("native", results)
    # A JSONResponse as is: the dict holds only JSON types, so FastAPI's jsonable_encoder walk
    # over it would be pure per-request cost.
    return JSONResponse(response_dict(results, was_list, body, st.settings.model_id, started))


def _error_event(err: ApiError) -> str:
    response = render_error("native", err)
    return event(bytes(response.body).decode(), "error")


@router.post("/translate/stream", dependencies=_KEY)
async def translate_stream(request: Request) -> Response:
    started = time.perf_counter()
    job, was_list, body = await parse_job(request)
    if was_list or len(job.texts) != 1:
        raise ApiError(400, "the stream endpoint takes one text (a string), not a list", field="text")
    st = state_of(request)

    async def events() -> AsyncIterator[str]:
        result = None
        async for piece in st.service.stream(job):
            if piece.result is not None:
                result = piece.result
            elif piece.text:
                yield event({"text": piece.text}, "delta")
        if result is None:
            raise ApiError(500, "the translator's stream ended without a result", type="engine_error")
        st.metrics.observe_results("native", [result])
        yield event(response_dict([result], False, body, st.settings.model_id, started), "done")

    return open_stream(request, events, _error_event)


@router.post("/detect", dependencies=_KEY)
async def detect(request: Request) -> dict[str, Any]:
    body = await read_body(request)
    text = get_str(body, "text", required=True)
    check_limits([text], state_of(request).settings, field="text")
    if not text.strip():
        raise ApiError(400, "text must not be empty", field="text")
    found = await execute(request, lambda: state_of(request).service.detect(text))
    lang = found.language
    return {"language": lang.code if lang else None, "name": lang.english_name if lang else None,
            "confidence": float(found.confidence)}


@router.get("/languages")
async def languages() -> list[dict[str, Any]]:
    return language_codes.native_languages()


@router.get("/models", dependencies=_KEY)
async def models(request: Request) -> dict[str, Any]:
    st = state_of(request)
    return {"models": [{**st.service.info(), "id": st.settings.model_id, "ready": st.service.ready}]}


@router.get("/status")
async def status(request: Request) -> dict[str, Any]:
    """The server's state; with API keys set, only `status` and `ready` without a key (auth.py)."""
    st = state_of(request)
    word = st.serving_status()
    if not has_key(request):
        return {"status": word, "ready": word == "ready", "key_required": True}
    stats = st.service.stats()
    info = st.service.info()
    total, used = stats.kv_blocks_total, stats.kv_blocks_used
    events = st.service.supervisor.events
    return {
        **info,
        "status": word,
        "ready": word == "ready",
        "error": st.service.public_error,
        "engine_pid": st.service.supervisor.engine_pid(),
        "engine_restarts": events.restarts,
        "engine_deaths": events.deaths,
        "engine_last_failure": events.last_failure,
        "engine_last_failure_at": events.last_failure_at,
        "queue_depth": st.admission.active,
        "queue_requests": st.admission.requests,
        "max_queue": st.settings.max_queue,
        "running": stats.num_running,
        "waiting": stats.num_waiting,
        "kv_blocks_total": total,
        "kv_blocks_used": used,
        "kv_usage": round(used / total, 4) if total else 0.0,
        "gpu_memory_bytes": stats.gpu_memory_bytes,
        "generated_tokens_total": stats.generated_tokens_total,
        "generation_steps_total": stats.generation_steps_total,
        "max_chars": st.settings.max_chars,
        "max_batch": st.settings.max_batch,
        "languages": len(LANGUAGES),
        "uptime_s": round(time.time() - st.started_at, 1),
    }
