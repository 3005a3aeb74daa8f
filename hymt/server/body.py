"""Request bodies: JSON or form-encoded, parsed once, and typed field access.

Protocols differ in how they send (LibreTranslate bindings and old DeepL clients post forms,
with repeated keys for lists; everyone else posts JSON). `read_body` returns a dict either
way; the `get_*` helpers raise 422 naming the field when a value has the wrong type.

JSON is parsed by orjson, which refuses what Python's json module lets through and the rest
of the server cannot handle: lone surrogates (`"\\ud800"`: no UTF-8 encoding exists), NaN
and Infinity (not JSON), and anything after the document. Nesting deeper
than MAX_JSON_DEPTH is refused after parsing (orjson builds deep documents without
recursion, but printing or walking them recursively would not survive): no request of
any protocol needs more than a few levels. The body's size was bounded before it was read
(hymt/server/body_limits.py).
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any, Literal, overload

import orjson
from fastapi import Request

from hymt.server.errors import ApiError

_CACHE_KEY = "hymt.body"
_MISSING = object()
#: The deepest nesting of arrays and objects a JSON body may have.
MAX_JSON_DEPTH = 32


async def read_body(request: Request) -> dict[str, Any]:
    """The body as a dict (cached on the request; auth and the handler share it).

    JSON bodies must be objects; form bodies map repeated keys to lists. Query parameters
    fill in keys the body lacks (GET requests and clients that mix both).
    """
    cached = request.scope.get(_CACHE_KEY)
    if cached is not None:
        return cached
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    body: dict[str, Any]
    if content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
        form = await request.form()
        body = _multi(form.multi_items())
    else:
        raw = await request.body()
        body = _parse_json(raw) if raw.strip() else {}
    for key, value in _multi(request.query_params.multi_items()).items():
        body.setdefault(key, value)
    request.scope[_CACHE_KEY] = body
    return body


def _parse_json(raw: bytes) -> dict[str, Any]:
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ApiError(400, f"malformed JSON body: {exc} (JSON without NaN, Infinity or lone surrogates expected)",
                       type="invalid_json", field="body") from None
    # Only a body with enough brackets can be too deep: most are checked by two byte counts.
    if raw.count(b"[") + raw.count(b"{") > MAX_JSON_DEPTH and _depth_over(data, MAX_JSON_DEPTH):
        raise ApiError(400, f"the JSON body nests deeper than {MAX_JSON_DEPTH} levels", type="invalid_json",
                       field="body")
    if not isinstance(data, dict):
        raise ApiError(
            422, f"the body must be a JSON object, got {type(data).__name__}", type="invalid_type", field="body"
        )
    return data


def _depth_over(data: object, limit: int) -> bool:
    """True when `data` nests lists and dicts deeper than `limit` (iterative: no recursion)."""
    stack: list[tuple[object, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def merge_repeated(items: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """Form or query pairs as a dict: a key given more than once maps to the list of its values
    in order, a key given once to its value."""
    out: dict[str, Any] = {}
    for key, value in items:
        if key in out:
            existing = out[key]
            out[key] = [*existing, value] if isinstance(existing, list) else [existing, value]
        else:
            out[key] = value
    return out


def _multi(items: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """merge_repeated, where a PHP-style `text[]=a` key drops its brackets and always gives a list."""
    listed: set[str] = set()
    pairs = []
    for key, value in items:
        if key.endswith("[]"):
            key = key[:-2]
            listed.add(key)
        pairs.append((key, value))
    out = merge_repeated(pairs)
    for key in listed:
        if not isinstance(out[key], list):
            out[key] = [out[key]]
    return out


def _type_error(field: str, expected: str, value: Any) -> ApiError:
    return ApiError(
        422, f"{field} must be {expected}, got {type(value).__name__}", type="invalid_type", field=field
    )


def get_str(body: Mapping, field: str, default: Any = None, *, required: bool = False) -> Any:
    """A string field (None/absent -> default)."""
    value = body.get(field, _MISSING)
    if value is _MISSING or value is None:
        if required:
            raise ApiError(400, f"{field} is required", type="missing_field", field=field)
        return default
    if not isinstance(value, str):
        raise _type_error(field, "a string", value)
    return value


def get_bool(body: Mapping, field: str, default: bool) -> bool:
    """A boolean field; form bodies send "true"/"false"/"1"/"0"."""
    value = body.get(field)
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "1", "yes", "false", "0", "no"):
        return value.strip().lower() in ("true", "1", "yes")
    raise _type_error(field, "a boolean", value)


def get_int(body: Mapping, field: str, default: int | None = None) -> int | None:
    """An integer field; form bodies send digit strings."""
    value = body.get(field)
    if value is None:
        return default
    if isinstance(value, bool):
        raise _type_error(field, "an integer", value)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass
    raise _type_error(field, "an integer", value)


def get_float(body: Mapping, field: str, default: float | None = None) -> float | None:
    """A number field; form bodies send numeric strings."""
    value = body.get(field)
    if value is None:
        return default
    if isinstance(value, bool):
        raise _type_error(field, "a number", value)
    number: float | None = None
    if isinstance(value, (int, float)):
        try:
            number = float(value)
        except OverflowError:  # an integer past the float range
            number = math.inf
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            pass
    if number is None:
        raise _type_error(field, "a number", value)
    if not math.isfinite(number):  # form bodies can spell them: "nan", "inf"
        raise ApiError(400, f"{field} must be a finite number, got {value!r}", field=field)
    return number


@overload
def get_texts(body: Mapping, field: str, *, required: Literal[True] = True) -> tuple[list[str], bool]: ...
@overload
def get_texts(body: Mapping, field: str, *, required: bool) -> tuple[list[str] | None, bool]: ...
def get_texts(body: Mapping, field: str, *, required: bool = True) -> tuple[list[str] | None, bool]:
    """A string-or-list-of-strings field: (items, was_list). Missing -> (None, False) or 400."""
    value = body.get(field)
    if value is None:
        if required:
            raise ApiError(400, f"{field} is required", type="missing_field", field=field)
        return None, False
    if isinstance(value, str):
        return [value], False
    if isinstance(value, list):
        for i, item in enumerate(value):
            if not isinstance(item, str):
                raise _type_error(f"{field}[{i}]", "a string", item)
        return list(value), True
    raise _type_error(field, "a string or a list of strings", value)


def get_glossary(body: Mapping, field: str = "glossary") -> tuple[tuple[str, str], ...]:
    """A glossary: {src: tgt}, [[src, tgt], ...] or [{"source", "target"}, ...]."""
    value = body.get(field)
    if value is None:
        return ()
    pairs: list = []
    if isinstance(value, Mapping):
        pairs = list(value.items())
    elif isinstance(value, list):
        for i, entry in enumerate(value):
            if isinstance(entry, Mapping) and "source" in entry and "target" in entry:
                pairs.append((entry["source"], entry["target"]))
            elif isinstance(entry, (list, tuple)) and len(entry) == 2:
                pairs.append(tuple(entry))
            else:
                raise _type_error(f"{field}[{i}]", "a [source, target] pair", entry)
    else:
        raise _type_error(field, "an object {source: target} or a list of [source, target] pairs", value)
    out = []
    for src, tgt in pairs:
        if not isinstance(src, str) or not isinstance(tgt, str):
            raise ApiError(422, f"{field} terms must be strings, got {type(src).__name__}: {type(tgt).__name__}",
                           type="invalid_type", field=field)
        if not src.strip() or not tgt.strip():
            raise ApiError(400, f"{field} terms must not be empty, got {src!r}: {tgt!r}", field=field)
        out.append((src, tgt))
    return tuple(out)


def get_strings(body: Mapping, field: str) -> tuple[str, ...]:
    """A list-of-strings field (absent: empty)."""
    value = body.get(field)
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _type_error(field, "a list of strings", value)
    return tuple(value)


def get_object(body: Mapping, field: str) -> Mapping | None:
    """A nested JSON object field, or None."""
    value = body.get(field)
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise _type_error(field, "an object", value)
    return value
