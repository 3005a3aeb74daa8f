"""Request fields every protocol parses the same way: languages, size limits, format, sampling.

Each protocol reads its own field names; the checks and their messages live here once, so
every protocol reports them alike (in its own error shape).
"""
from __future__ import annotations

from collections.abc import Mapping

from hymt.errors import InvalidInputError, UnknownLanguageError
from hymt.languages import Language, get_language, supported_codes
from hymt.server.body import get_bool, get_float, get_int
from hymt.server.errors import ApiError
from hymt.server.settings import ServerSettings
from hymt.translate.sampling_policy import Sampling
from hymt.translate.text_formats import check_text_format

AUTO = ("auto", "")

#: The `sampling` object of the native API (and `hymt bench --server`), with its types.
SAMPLING_FIELDS: dict[str, type] = {
    "temperature": float,
    "top_p": float,
    "top_k": int,
    "repetition_penalty": float,
    "max_tokens": int,
    "seed": int,
    "ignore_eos": bool,
}


def language(code: object, field: str, *, allow_auto: bool = False) -> Language | None:
    """A client language code -> Language; "auto" -> None when allowed; else 400 listing codes."""
    if code is None or (isinstance(code, str) and code.strip().lower() in AUTO):
        if allow_auto:
            return None
        raise ApiError(400, f"{field} is required; supported codes: {', '.join(supported_codes())}",
                       type="missing_field", field=field, valid=supported_codes())
    if not isinstance(code, str):
        raise ApiError(422, f"{field} must be a language code string, got {type(code).__name__}",
                       type="invalid_type", field=field)
    try:
        return get_language(code, field=field)
    except UnknownLanguageError as exc:
        raise ApiError.from_input_error(exc, field=field) from None


def target_language(code: object, field: str) -> Language:
    """A required target language (400 naming `field` when absent)."""
    found = language(code, field)
    assert found is not None  # language() raises for a missing required code
    return found


def check_limits(texts: list[str], settings: ServerSettings, *, field: str, max_items: int | None = None) -> None:
    """413 over --max-batch / --max-chars, 400 for an empty list; messages name the limit."""
    limit = min(settings.max_batch, max_items) if max_items else settings.max_batch
    if not texts:
        raise ApiError(400, f"{field} must not be empty", field=field)
    if len(texts) > limit:
        raise ApiError(413, f"{field} has {len(texts)} items; the limit is {limit} items per request (--max-batch)",
                       type="too_large", field=field)
    chars = sum(len(t) for t in texts)
    if chars > settings.max_chars:
        raise ApiError(413, f"{field} has {chars} characters; the limit is {settings.max_chars} characters "
                       "per request (--max-chars)", type="too_large", field=field)


def format_field(value: object, field: str = "format") -> str:
    """A document format name (400 listing the valid ones; 422 for a non-string)."""
    if value is None:
        return "text"
    if not isinstance(value, str):
        raise ApiError(422, f"{field} must be a string", type="invalid_type", field=field)
    try:
        return check_text_format(value)
    except InvalidInputError as exc:
        raise ApiError.from_input_error(exc, field=field) from None


def sampling_field(obj: Mapping[str, object] | None, field: str = "sampling") -> Sampling:
    """The native `sampling` object -> Sampling over the greedy preset (absent: the default)."""
    if obj is None:
        return Sampling()
    unknown = sorted(set(obj) - set(SAMPLING_FIELDS))
    if unknown:
        raise ApiError(400, f"unknown {field} field(s) {', '.join(unknown)}; valid: {', '.join(SAMPLING_FIELDS)}",
                       field=f"{field}.{unknown[0]}", valid=list(SAMPLING_FIELDS))
    values: dict[str, object] = {}
    for name, kind in SAMPLING_FIELDS.items():
        path = f"{field}.{name}"
        try:
            value: object = (get_bool(obj, name, None) if kind is bool  # type: ignore[arg-type]
                             else get_int(obj, name) if kind is int else get_float(obj, name))
        except ApiError as exc:
            raise ApiError(exc.status, exc.message.replace(name, path, 1), type=exc.type, field=path) from None
        if value is not None:
            values[name] = value
    return sampling_of(values, field)


def sampling_of(values: Mapping[str, object], field: str) -> Sampling:
    """Sampling from parsed fields, its validation errors as 400 naming `field.<name>`."""
    try:
        return Sampling(**values)  # type: ignore[arg-type]
    except InvalidInputError as exc:
        name = exc.field.split(".", 1)[-1] if exc.field else None
        raise ApiError(400, str(exc), field=f"{field}.{name}" if name else field) from None
