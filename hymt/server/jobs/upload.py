"""Receiving a document upload: multipart/form-data, streamed to the job store, size-checked
as it arrives.

The body is counted while it is read: past --max-file-mb (plus room for the form's other
fields) the upload stops with 413 before the rest is read, and a Content-Length over the
limit is refused before anything is read. The file part goes to disk as it arrives
(Starlette's spooled temporary file, then the job store's `<ID>.part`), never whole into
memory. Its name is kept for display only (job.display_name); the stored file is named by
the job id.

Uploads check the API key themselves rather than through `auth.require_key`, which would
read the whole body as a form to look for LibreTranslate's `api_key` field: a key in the
headers is checked before the body is read, one in the form right after.
"""
from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from typing import Any

from fastapi import Request
from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser

from hymt.server.auth import key_from_headers, key_matches
from hymt.server.body import merge_repeated
from hymt.server.errors import ApiError
from hymt.server.jobs.job import display_name, new_job_id
from hymt.server.jobs.store import JobStore
from hymt.server.state import state_of

#: Bytes the form's other fields (languages, options, a glossary) may add to the body.
FIELD_ROOM = 1024 * 1024
_COPY_CHUNK = 1024 * 1024


@dataclass(frozen=True)
class Upload:
    """A received document: stored at `store.upload_path(job_id)`, not yet a job.

    Attributes:
        job_id: the id the job will have (and the stored file's name).
        filename: the client's file name as shown (display_name).
        size: bytes received.
        fields: the form's other fields (strings; a repeated field is a list).
    """

    job_id: str
    filename: str
    size: int
    fields: dict[str, Any]


def _limit_error(limit: int) -> ApiError:
    return ApiError(413, f"the file is larger than {limit / 1024 / 1024:g} MB (--max-file-mb)", type="too_large",
                    field="file")


async def _counted(stream: AsyncIterator[bytes], limit: int, file_limit: int) -> AsyncGenerator[bytes, None]:
    received = 0
    async for chunk in stream:
        received += len(chunk)
        if received > limit:
            raise _limit_error(file_limit)
        yield chunk


async def receive_upload(request: Request, store: JobStore, max_bytes: int, field: str = "file") -> Upload:
    """The document in `field` of a multipart body, written to the store; 400 without one,
    413 over `max_bytes`, 401 without a valid key (when the server has keys)."""
    header_key = key_from_headers(request)
    if header_key is not None:
        check_key(request, header_key)
    content_type = request.headers.get("content-type", "")
    if not content_type.lower().startswith("multipart/form-data"):
        raise ApiError(400, f"send the document as multipart/form-data with the file in the `{field}` field",
                       type="invalid_body", field=field)
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes + FIELD_ROOM:
        raise _limit_error(max_bytes)
    parser = MultiPartParser(request.headers, _counted(request.stream(), max_bytes + FIELD_ROOM, max_bytes),
                             max_files=1, max_fields=64)
    try:
        form = await parser.parse()
    except MultiPartException as exc:
        raise ApiError(400, f"malformed multipart body: {exc.message}", type="invalid_body", field=field) from None
    files = [value for _, value in form.multi_items() if isinstance(value, UploadFile)]
    try:
        fields = merge_repeated((k, v) for k, v in form.multi_items() if not isinstance(v, UploadFile))
        if header_key is None:
            check_key(request, fields.get("api_key") if isinstance(fields.get("api_key"), str) else None)
        upload = next((value for key, value in form.multi_items() if key == field and isinstance(value, UploadFile)),
                      None)
        if upload is None:
            raise ApiError(400, f"{field} is required: the document, as a multipart file field", type="missing_field",
                           field=field)
        if upload.size is not None and upload.size > max_bytes:
            raise _limit_error(max_bytes)
        job_id = new_job_id()
        size = await asyncio.to_thread(_save, upload, store, job_id)
        return Upload(job_id, display_name(upload.filename), size, fields)
    finally:
        for file in files:
            await file.close()


def check_key(request: Request, candidate: str | None) -> None:
    """401 unless `candidate` is one of the server's keys (no keys: everything is open)."""
    keys: tuple[str, ...] = state_of(request).settings.api_keys
    if not keys:
        return
    if not candidate:
        raise ApiError(401, "an API key is required: send `Authorization: Bearer <key>`, "
                       "`Authorization: DeepL-Auth-Key <key>`, `X-API-Key: <key>` or the form field `api_key`",
                       type="missing_key", headers={"WWW-Authenticate": "Bearer"})
    if not key_matches(candidate, keys):
        raise ApiError(401, "invalid API key", type="invalid_key", headers={"WWW-Authenticate": "Bearer"})


def _save(upload: UploadFile, store: JobStore, job_id: str) -> int:
    upload.file.seek(0)
    path = store.upload_path(job_id)
    with path.open("wb") as out:
        shutil.copyfileobj(upload.file, out, _COPY_CHUNK)
        return out.tell()
