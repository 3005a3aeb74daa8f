"""hymt's document API under /api/documents: upload a file, follow its job, download the result.

    POST   /api/documents               multipart: file, tgt, src (auto), format (default: from
                                        the file name), glossary (JSON), context, style,
                                        template, sampling (JSON), use_cache, retry; or the
                                        options as one JSON field `options` -> 201 {job}
    GET    /api/documents               {"documents": [job, ...]} newest first
    GET    /api/documents/formats       {"formats": [{name, suffixes, media_type, text}]} (open)
    GET    /api/documents/{id}          {job}
    GET    /api/documents/{id}/events   SSE: `progress` {job} at each change, then `done` {job}
                                        or `error` {"error": {...}}
    GET    /api/documents/{id}/result   the translated file (Content-Disposition: its name)
    DELETE /api/documents/{id}          {"deleted": true}; a running job is stopped

A job: {id, filename, format, src, tgt, state (queued|translating|done|error), progress
{done, total}, seconds_remaining, error, result {filename, media_type, url} (when done),
chars, created, updated, expires, options}. Errors are the native shape (native_api.py);
404 for an unknown id, 409 for a result not ready yet.
"""
from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import FileResponse, JSONResponse, StreamingResponse

from hymt.documents import registry
from hymt.server.auth import require_key
from hymt.server.body import get_bool, get_glossary, get_object, get_str
from hymt.server.errors import ApiError, library_errors
from hymt.server.jobs.job import Job, JobState
from hymt.server.jobs.runner import JobRunner, jobs_of
from hymt.server.jobs.upload import Upload, receive_upload
from hymt.server.request_fields import language, sampling_field, target_language
from hymt.server.sse import SSE_HEADERS, event
from hymt.server.state import state_of
from hymt.translate.options import TranslateOptions

router = APIRouter(prefix="/api/documents")
_KEY = [Depends(require_key)]
#: Form fields that carry JSON.
_JSON_FIELDS = ("glossary", "sampling", "options")
#: Seconds between SSE keep-alive comments, and the least time between two progress events.
KEEPALIVE_S = 15.0
EVENT_GAP_S = 0.2


def job_dict(job: Job, now: float | None = None) -> dict[str, Any]:
    """A job as the native API shows it."""
    now = time.time() if now is None else now
    done = job.state == JobState.DONE
    return {
        "id": job.id,
        "filename": job.filename,
        "format": job.format,
        "src": job.source or "auto",
        "tgt": job.target,
        "state": str(job.state),
        "progress": {"done": job.done, "total": job.total},
        "seconds_remaining": job.seconds_remaining(now),
        "error": job.error,
        "result": {"filename": job.result_name, "media_type": job.media_type,
                   "url": f"/api/documents/{job.id}/result"} if done else None,
        "chars": job.chars,
        "created": job.created,
        "updated": job.updated,
        "expires": job.expires,
        "options": job.options,
    }


def _decoded(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The form's fields with the JSON ones decoded; `options` spread under the others."""
    out: dict[str, Any] = {}
    for name, value in fields.items():
        if name in _JSON_FIELDS and isinstance(value, str):
            try:
                value = json.loads(value) if value.strip() else None
            except json.JSONDecodeError as exc:
                raise ApiError(400, f"{name} must be JSON: {exc}", type="invalid_json", field=name) from None
        out[name] = value
    nested = get_object(out, "options") or {}
    return {**nested, **{k: v for k, v in out.items() if k != "options"}}


def _options(body: Mapping[str, Any], cache_default: bool) -> TranslateOptions:
    with library_errors():
        return TranslateOptions(
            glossary=get_glossary(body),
            context=get_str(body, "context") or None,
            style=get_str(body, "style") or None,
            template=get_str(body, "template") or None,
            sampling=sampling_field(get_object(body, "sampling")),
            use_cache=get_bool(body, "use_cache", cache_default),
            retry=get_bool(body, "retry", True),
        )


@router.post("")
async def upload(request: Request) -> JSONResponse:
    st = state_of(request)
    runner = jobs_of(request)
    received = await receive_upload(request, runner.store(), st.settings.max_file_bytes)
    job = await _accept(runner, received, st.settings.cache)
    return JSONResponse(job_dict(job), status_code=201, headers={"Location": f"/api/documents/{job.id}"})


async def _accept(runner: JobRunner, received: Upload, cache_default: bool) -> Job:
    try:
        body = _decoded(received.fields)
        target = target_language(body.get("tgt"), "tgt")
        source = language(body.get("src", "auto"), "src", allow_auto=True)
        options = _options(body, cache_default)
        format_name = get_str(body, "format")
    except BaseException:
        runner.discard(received)
        raise
    return await runner.accept(received, target=target, source=source, options=options, format_name=format_name)


@router.get("/formats")
async def formats() -> dict[str, Any]:
    """The document formats (the registry's, so new formats appear by themselves); open, like
    /api/languages: the web UI shows them before any key."""
    return {"formats": [{"name": fmt.name, "suffixes": list(fmt.suffixes), "media_type": fmt.media_type,
                         "text": fmt.text} for fmt in registry.formats()]}


@router.get("", dependencies=_KEY)
async def list_jobs(request: Request) -> JSONResponse:
    now = time.time()
    return JSONResponse({"documents": [job_dict(job, now) for job in jobs_of(request).all()]})


def found_job(runner: JobRunner, job_id: str) -> Job:
    job = runner.get(job_id)
    if job is None:
        raise ApiError(404, f"no document job {job_id!r} (it may have expired or been deleted)", type="not_found",
                       field="id")
    return job


@router.get("/{job_id}", dependencies=_KEY)
async def get_job(request: Request, job_id: str) -> JSONResponse:
    return JSONResponse(job_dict(found_job(jobs_of(request), job_id)))


@router.get("/{job_id}/result", dependencies=_KEY)
async def result(request: Request, job_id: str) -> FileResponse:
    runner = jobs_of(request)
    job = found_job(runner, job_id)
    if job.state != JobState.DONE:
        detail = f": {job.error}" if job.error else ""
        raise ApiError(409, f"document job {job_id} has no result: it is {job.state}{detail}", type="not_done",
                       field="id")
    path = runner.store().result_path(job.id)
    if not path.is_file():
        raise ApiError(404, f"the result of document job {job_id} is gone (expired)", type="not_found", field="id")
    return FileResponse(path, media_type=job.media_type, filename=job.result_name)


@router.delete("/{job_id}", dependencies=_KEY)
async def delete(request: Request, job_id: str) -> JSONResponse:
    if not await jobs_of(request).delete(job_id):
        raise ApiError(404, f"no document job {job_id!r}", type="not_found", field="id")
    return JSONResponse({"deleted": True, "id": job_id})


@router.get("/{job_id}/events", dependencies=_KEY)
async def events(request: Request, job_id: str) -> StreamingResponse:
    runner = jobs_of(request)
    found_job(runner, job_id)  # 404 before the stream starts
    return StreamingResponse(_job_events(runner, job_id), media_type="text/event-stream", headers=SSE_HEADERS)


async def _job_events(runner: JobRunner, job_id: str) -> AsyncIterator[str]:
    """`progress` at each change (at most every EVENT_GAP_S), then `done` or `error`."""
    last: tuple[object, ...] | None = None
    quiet_since = time.monotonic()
    while True:
        job = runner.get(job_id)
        if job is None:
            yield event({"error": {"message": f"document job {job_id} was deleted", "type": "not_found",
                                   "field": "id"}}, "error")
            return
        if job.state == JobState.DONE:
            yield event(job_dict(job), "done")
            return
        if job.state == JobState.ERROR:
            yield event({"error": {"message": job.error, "type": "job_failed", "field": None},
                         "job": job_dict(job)}, "error")
            return
        seen = (job.state, job.done, job.total)
        if seen != last:
            last, quiet_since = seen, time.monotonic()
            yield event(job_dict(job), "progress")
        elif time.monotonic() - quiet_since > KEEPALIVE_S:
            quiet_since = time.monotonic()
            yield ": keep-alive\n\n"
        await runner.wait_change(timeout=1.0)
        await asyncio.sleep(EVENT_GAP_S)
