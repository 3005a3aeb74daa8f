"""DeepL v2 document translation (docs/reference/protocols.md §2.3), at /v2/document and
/deepl/v2/document, over hymt's document jobs (hymt/server/jobs/).

    POST /v2/document                 multipart: file, target_lang, source_lang (omitted: detect),
                                      formality, glossary_id (needs source_lang), output_format
      -> {"document_id", "document_key"}
    POST /v2/document/{id}            {document_key} (JSON or form)
      -> {"document_id", "status": queued|translating|done|error, "seconds_remaining"
          (translating), "billed_characters" (done), "error_message" (error)}
    POST /v2/document/{id}/result     {document_key} -> the translated file; the job is deleted
                                      (DeepL removes a document once downloaded)

Errors are DeepL's {"message": "..."}: 400 for a bad field or file (an unsupported type names
the supported ones), 403 for a bad API key, 404 for an unknown document or a key that does
not match it, 413 for a file over --max-file-mb, 503 for a result asked before it is ready
(the DeepL clients then raise DocumentNotReadyException).
"""
from __future__ import annotations

import hmac
import time
from pathlib import PurePath
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import FileResponse
from starlette.background import BackgroundTask

from hymt.server.auth import require_key
from hymt.server.body import get_str, read_body
from hymt.server.errors import ApiError, set_protocol
from hymt.server.jobs.intake import resolve_format
from hymt.server.jobs.job import Job, JobState
from hymt.server.jobs.runner import JobRunner, jobs_of
from hymt.server.jobs.upload import Upload, receive_upload
from hymt.server.protocols import deepl_glossaries
from hymt.server.protocols.deepl_instructions import style_options
from hymt.server.protocols.deepl_request import read_request
from hymt.server.state import state_of
from hymt.translate.options import TranslateOptions


def build_router(prefix: str) -> APIRouter:
    router = APIRouter(prefix=f"{prefix}/v2/document")
    router.add_api_route("", upload, methods=["POST"])  # checks the key itself (hymt/server/jobs/upload.py)
    router.add_api_route("/{document_id}", status, methods=["POST"], dependencies=[Depends(require_key)])
    router.add_api_route("/{document_id}/result", result, methods=["POST"], dependencies=[Depends(require_key)])
    return router


async def upload(request: Request) -> dict[str, Any]:
    set_protocol(request, "deepl")
    st = state_of(request)
    runner = jobs_of(request)
    received = await receive_upload(request, runner.store(), st.settings.max_file_bytes)
    try:
        fields = received.fields
        req = read_request(fields, ())
        _check_output_format(received, get_str(fields, "output_format"))
        glossary = req.inline_glossary
        if req.glossary_ids:
            assert req.source is not None  # read_request refuses glossaries without source_lang
            glossary += await deepl_glossaries.translation_glossary(request, req.glossary_ids, req.source,
                                                                    req.target)
        style = style_options(st.service.require_ready().family, req, glossary)
        options = TranslateOptions(glossary=glossary, context=style.context, style=style.style,
                                   template=style.template, preferences=style.preferences,
                                   tag_rules=req.tag_rules, split_sentences=req.split_sentences,
                                   use_cache=st.settings.cache)
        target, source = req.target, req.source
    except BaseException:
        runner.discard(received)
        raise
    job = await runner.accept(received, target=target, source=source, options=options)
    return {"document_id": job.id, "document_key": job.key}


def _check_output_format(received: Upload, output_format: str | None) -> None:
    """DeepL clients ask for another output format when the output file's suffix differs; hymt
    writes each format as itself (a PDF as DOCX), so only that one is accepted."""
    if not output_format:
        return
    fmt = resolve_format(received.filename, None)
    produced = fmt.translated_suffix(PurePath(received.filename).suffix.lower()).lstrip(".")
    if output_format.lower().lstrip(".") != produced:
        raise ApiError(400, f"Value for 'output_format' not supported: a {fmt.name} file is translated into "
                       f"{produced}; valid: {produced}", field="output_format", valid=[produced])


async def _job_with_key(request: Request, document_id: str) -> tuple[JobRunner, Job]:
    set_protocol(request, "deepl")
    body = await read_body(request)
    key = get_str(body, "document_key", required=True)
    runner = jobs_of(request)
    job = runner.get(document_id)
    if job is None or not hmac.compare_digest(job.key.encode(), key.strip().upper().encode()):
        raise ApiError(404, "Document not found: no document with this document_id and document_key (documents "
                       "are deleted once downloaded, or when they expire)", type="not_found", field="document_id")
    return runner, job


async def status(request: Request, document_id: str) -> dict[str, Any]:
    _, job = await _job_with_key(request, document_id)
    out: dict[str, Any] = {"document_id": job.id, "status": str(job.state)}
    if job.state == JobState.TRANSLATING:
        remaining = job.seconds_remaining(time.time())
        if remaining is not None:
            out["seconds_remaining"] = remaining
    if job.state == JobState.DONE:
        out["billed_characters"] = job.chars
    if job.state == JobState.ERROR:
        out["error_message"] = job.error
    return out


async def result(request: Request, document_id: str) -> FileResponse:
    runner, job = await _job_with_key(request, document_id)
    if job.state != JobState.DONE:
        if job.state == JobState.ERROR:
            raise ApiError(400, f"Document translation failed: {job.error}", type="job_failed", field="document_id")
        raise ApiError(503, f"Document not ready: it is {job.state}", type="not_ready",
                       headers={"Retry-After": "5"})
    store = runner.store()
    path = store.result_path(job.id)
    if not path.is_file():
        raise ApiError(404, "Document not found: its result has expired", type="not_found", field="document_id")
    store.forget(job.id)  # from now on unknown, as DeepL's documents are once downloaded
    return FileResponse(path, media_type=job.media_type, filename=job.result_name,
                        background=BackgroundTask(store.remove_files, job.id))
