"""A document job as the store keeps it: the file's facts, the options, the state and progress.

A job moves queued -> translating -> done | error. `translating` jobs belong to one server
process (`owner`) until they finish; a job whose owner died goes back to `queued`. Options
are kept as JSON (`options_json` / `options_from_json`), so a job resumes after a restart
with exactly the options it was submitted with, and so with the same engine requests.
"""
from __future__ import annotations

import re
import secrets
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from hymt.errors import InvalidInputError
from hymt.translate.options import TranslateOptions
from hymt.translate.sampling_policy import Sampling


class JobState(StrEnum):
    QUEUED = "queued"
    TRANSLATING = "translating"
    DONE = "done"
    ERROR = "error"


#: States a job leaves no more.
FINISHED = (JobState.DONE, JobState.ERROR)
#: A job id: 32 hex digits (DeepL's document_id has the same shape).
_JOB_ID = re.compile(r"[0-9A-F]{32}")
#: The longest client file name kept (for display and the download's name only).
MAX_NAME_CHARS = 200


def new_job_id() -> str:
    return secrets.token_hex(16).upper()


def new_job_key() -> str:
    """The secret DeepL's clients send back with every call about the document."""
    return secrets.token_hex(32).upper()


def is_job_id(value: str) -> bool:
    """True for a well-formed id: the only thing from a URL that ever names a stored file."""
    return bool(_JOB_ID.fullmatch(value))


def display_name(filename: str | None) -> str:
    """A client's file name as hymt shows it: the last path component (either separator),
    without control characters, at most MAX_NAME_CHARS. Never used to build a path."""
    name = re.split(r"[\\/]", filename or "")[-1]
    name = "".join(ch for ch in name if unicodedata.category(ch)[0] != "C").strip()
    return name[-MAX_NAME_CHARS:] if name not in ("", ".", "..") else ""


@dataclass(frozen=True)
class Job:
    """One document job.

    Attributes:
        id: the job id (also the stored files' name).
        key: the document key DeepL clients must send back.
        filename: the client's file name (display_name), "" when none was given.
        format: the document format's name (hymt.documents.registry).
        source / target: language codes (source None: detect).
        options: the TranslateOptions as JSON (options_json).
        state: queued | translating | done | error.
        done / total: segments translated and segments in all (total is estimated at upload,
            exact once the job has started).
        chars: characters of text in the document (DeepL's billed_characters).
        error: why the job failed (state error).
        created / updated / expires: epoch seconds; the job and its files are deleted after
            `expires`.
        started: when the current attempt began translating (for the time estimate).
        result_name / media_type: the translated file's name and MIME type (state done).
        owner / heartbeat: the server process translating it, and when it last said so.
    """

    id: str
    key: str
    filename: str
    format: str
    source: str | None
    target: str
    options: dict[str, Any]
    state: JobState
    done: int
    total: int
    chars: int
    error: str | None
    created: float
    updated: float
    expires: float
    started: float | None = None
    result_name: str = ""
    media_type: str = ""
    owner: str | None = None
    heartbeat: float | None = None

    @property
    def finished(self) -> bool:
        return self.state in FINISHED

    def seconds_remaining(self, now: float) -> int | None:
        """A linear estimate from the rate so far; None before the first segment is done."""
        if self.state != JobState.TRANSLATING or not self.started or self.done <= 0:
            return None
        rate = self.done / max(now - self.started, 1e-3)
        return max(0, round((self.total - self.done) / rate))


def options_json(options: TranslateOptions) -> dict[str, Any]:
    """The options a job keeps, as JSON-ready data (the fields the document APIs take)."""
    sampling = options.sampling
    return {
        "glossary": [list(pair) for pair in options.glossary],
        "context": options.context,
        "style": options.style,
        "template": options.template,
        "sampling": {"preset": sampling.preset, **{k: list(v) if isinstance(v, tuple) else v
                                                   for k, v in sampling.explicit().items()}},
        "use_cache": options.use_cache,
        "retry": options.retry,
    }


def options_from_json(data: Mapping[str, Any]) -> TranslateOptions:
    """TranslateOptions from `options_json`'s data (validated again)."""
    if not isinstance(data, Mapping):
        raise InvalidInputError("job options must be an object", field="options")
    sampling = dict(data.get("sampling") or {})
    if isinstance(sampling.get("stop_token_ids"), list):
        sampling["stop_token_ids"] = tuple(sampling["stop_token_ids"])
    return TranslateOptions(
        glossary=tuple((str(s), str(t)) for s, t in data.get("glossary") or ()),
        context=data.get("context"), style=data.get("style"), template=data.get("template"),
        sampling=Sampling.parse(sampling), use_cache=bool(data.get("use_cache", True)),
        retry=bool(data.get("retry", True)),
    )
