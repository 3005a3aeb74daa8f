"""TranslateJob: one protocol-neutral translation request, built by every protocol handler.

Every protocol parses its own fields into a TranslateJob; the limits (`--max-chars`,
`--max-batch`) and language lookups are checked here once, so every protocol reports them
the same way (in its own error shape).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from hymt.engine.sampling import SamplingParams
from hymt.errors import InvalidInputError, UnknownLanguageError
from hymt.languages import Language, get_language, supported_codes
from hymt.server.body import get_bool, get_float, get_int
from hymt.server.errors import ApiError
from hymt.server.settings import ServerSettings

FORMATS = ("text", "markdown", "html", "srt")
AUTO = ("auto", "")

#: The Translator's default decoding (greedy with the official repetition penalty, docs/reference/models.md §8):
#: the base a request's `sampling` fields and --max-tokens change.
DEFAULT_SAMPLING = SamplingParams(repetition_penalty=1.05)

#: The `sampling` object of the native API (and `hymt bench --server`), with its types.
SAMPLING_FIELDS = {
    "temperature": float,
    "top_p": float,
    "top_k": int,
    "repetition_penalty": float,
    "max_tokens": int,
    "seed": int,
    "ignore_eos": bool,
}


@dataclass(frozen=True)
class TranslateJob:
    """What to translate and how, whatever protocol asked.

    Attributes:
        texts: the items, in order (a single text is a one-item job).
        target: the target language.
        source: the source language, or None to detect per item.
        glossary / context / style / template / format: prompt options (None = Translator default).
        sampling: explicit SamplingParams, "official" (the family's sampled decoding), or None
            for the Translator's default.
        use_cache: look up and store in the translation cache.
        retry: let the quality guard send a flagged segment to the engine once more; False
            keeps every segment to one engine request (`hymt bench --server`).
    """

    texts: tuple[str, ...]
    target: Language
    source: Language | None = None
    glossary: tuple[tuple[str, str], ...] = ()
    context: str | None = None
    style: str | None = None
    template: str | None = None
    format: str = "text"
    sampling: SamplingParams | str | None = None
    use_cache: bool = True
    retry: bool = True
    extra: dict = field(default_factory=dict)

    @property
    def chars(self) -> int:
        return sum(len(t) for t in self.texts)


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


def check_format(value: object, field: str = "format") -> str:
    if value is None:
        return "text"
    if not isinstance(value, str):
        raise ApiError(422, f"{field} must be a string", type="invalid_type", field=field)
    fmt = value.strip().lower()
    if fmt not in FORMATS:
        raise ApiError(400, f"unsupported {field} {value!r}; valid: {', '.join(FORMATS)}", field=field, valid=FORMATS)
    return fmt


def parse_sampling(obj: Mapping | None, field: str = "sampling", base: SamplingParams | None = None) -> SamplingParams | None:
    """The native `sampling` object -> SamplingParams on top of `base` (default: the
    Translator's own default), None when absent."""
    if obj is None:
        return None
    unknown = sorted(set(obj) - set(SAMPLING_FIELDS))
    if unknown:
        raise ApiError(400, f"unknown {field} field(s) {', '.join(unknown)}; valid: {', '.join(SAMPLING_FIELDS)}",
                       field=f"{field}.{unknown[0]}", valid=list(SAMPLING_FIELDS))
    values: dict[str, object] = {}
    for name, kind in SAMPLING_FIELDS.items():
        path = f"{field}.{name}"
        if kind is bool:
            value = get_bool(obj, name, None)  # type: ignore[arg-type]
        elif kind is int:
            value = _renamed(get_int, obj, name, path)
        else:
            value = _renamed(get_float, obj, name, path)
        if value is not None:
            values[name] = value
    return sampling_from(values, base, field)


def sampling_from(values: Mapping[str, object], base: SamplingParams | None, field: str) -> SamplingParams:
    """Build SamplingParams, turning its validation errors into 400 naming `field.<name>`."""
    try:
        return (base or DEFAULT_SAMPLING).replace(**values)
    except InvalidInputError as exc:
        raise ApiError(400, str(exc), field=f"{field}.{exc.field}" if exc.field else field) from None


def _renamed(getter, obj: Mapping, name: str, path: str):
    try:
        return getter(obj, name)
    except ApiError as exc:
        exc.field = path
        exc.message = exc.message.replace(name, path, 1)
        exc.args = (exc.message,)
        raise
