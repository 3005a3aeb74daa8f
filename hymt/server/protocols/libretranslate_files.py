"""LibreTranslate file translation (docs/reference/protocols.md §2.2), at the root and under
/libretranslate, over hymt's document jobs (hymt/server/jobs/).

    POST /translate_file        multipart: file, source (code or auto), target, api_key
      -> {"translatedFileUrl": "<server>/download_file/<ID>.<name>"} once translated
    GET  /download_file/<ID>.<name>   the translated file

LibreTranslate answers /translate_file when the file is translated, so the request waits for
its job (a client that disconnects leaves the job to finish; it expires like any other).
The download link works without a key, as LibreTranslate's does: the 128-bit job id in it is
the capability. Errors are LibreTranslate's {"error": "..."} with 400 (413 and 422 become
400), 403 for a bad key, 404 for an unknown file, 500 for a failed translation.
"""
from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse

from hymt.server.admission import ClientGone, wait_for_disconnect
from hymt.server.body import get_str
from hymt.server.errors import ApiError, set_protocol
from hymt.server.jobs.job import Job, JobState, is_job_id
from hymt.server.jobs.runner import JobRunner, jobs_of
from hymt.server.jobs.upload import receive_upload
from hymt.server.request_fields import language, target_language
from hymt.server.state import state_of
from hymt.translate.options import TranslateOptions

DOWNLOAD_PATH = "/download_file/"


def build_router(prefix: str) -> APIRouter:
    router = APIRouter(prefix=prefix)
    router.add_api_route("/translate_file", translate_file, methods=["POST"])  # checks the key itself
    router.add_api_route(DOWNLOAD_PATH + "{name}", download_file, methods=["GET"])
    return router


async def translate_file(request: Request) -> dict[str, Any]:
    set_protocol(request, "libretranslate")
    st = state_of(request)
    runner = jobs_of(request)
    received = await receive_upload(request, runner.store(), st.settings.max_file_bytes)
    try:
        target = target_language(get_str(received.fields, "target", required=True), "target")
        source = language(get_str(received.fields, "source", "auto"), "source", allow_auto=True)
    except BaseException:
        runner.discard(received)
        raise
    job = await runner.accept(received, target=target, source=source,
                              options=TranslateOptions(use_cache=st.settings.cache))
    job = await _finished(request, runner, job.id)
    if job.state == JobState.ERROR:
        raise ApiError(500, f"the file could not be translated: {job.error}", type="job_failed", field="file")
    base = request.url.path[: -len("/translate_file")]
    name = quote(f"{job.id}.{job.result_name}")
    return {"translatedFileUrl": f"{str(request.base_url).rstrip('/')}{base}{DOWNLOAD_PATH}{name}"}


async def _finished(request: Request, runner: JobRunner, job_id: str) -> Job:
    """The job once done or failed; ClientGone (499) when the client leaves first."""
    gone = asyncio.ensure_future(wait_for_disconnect(request))
    try:
        while True:
            job = runner.get(job_id)
            if job is None:
                raise ApiError(404, "the file's translation job was deleted", type="not_found", field="file")
            if job.finished:
                return job
            change = asyncio.ensure_future(runner.wait_change(timeout=1.0))
            await asyncio.wait({change, gone}, return_when=asyncio.FIRST_COMPLETED)
            if gone.done():
                change.cancel()
                raise ClientGone()
    finally:
        gone.cancel()


async def download_file(request: Request, name: str) -> FileResponse:
    set_protocol(request, "libretranslate")
    job_id = name.split(".", 1)[0]
    runner = jobs_of(request)
    job = runner.get(job_id) if is_job_id(job_id) else None
    path = runner.store().result_path(job.id) if job is not None else None
    if job is None or job.state != JobState.DONE or path is None or not path.is_file():
        raise ApiError(404, f"no translated file {name!r} (files are kept for a while, then deleted)",
                       type="not_found", field="filename")
    return FileResponse(path, media_type=job.media_type, filename=job.result_name)
