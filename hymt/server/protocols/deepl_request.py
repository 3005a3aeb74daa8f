"""The fields of DeepL's POST /v2/translate, read and checked with DeepL's own error wording.

DeepL answers a bad value with 400 `Value for '<field>' not supported.` and a missing one
with `Parameter '<field>' not specified.` (docs/reference/protocols.md §2.3); clients match
on those words, so every message here starts with them and then says, in hymt's way, what
was wrong and what is valid.
"""
from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hymt.documents.units import TagRules
from hymt.errors import UnknownLanguageError
from hymt.languages import Language, get_language
from hymt.server.body import get_glossary
from hymt.server.errors import ApiError
from hymt.server.language_codes import deepl_codes
from hymt.translate.glossary import Glossary

#: DeepL's request limits and value sets.
MAX_TEXTS = 50
MAX_GLOSSARY_IDS = 5
MAX_CUSTOM_INSTRUCTIONS = 10
MAX_INSTRUCTION_CHARS = 300
TAG_HANDLING = ("xml", "html")
TAG_HANDLING_VERSIONS = ("v1", "v2")
FORMALITY = ("default", "more", "less", "prefer_more", "prefer_less")
SPLIT_SENTENCES = ("0", "1", "nonewlines")
MODEL_TYPES = ("quality_optimized", "prefer_quality_optimized", "latency_optimized")
_FLAGS = {"1": True, "true": True, "0": False, "false": False}


def not_supported(field: str, detail: str, valid: tuple[str, ...] | list[str] | None = None) -> ApiError:
    """DeepL's 400 for a bad value, with hymt's explanation after it."""
    return ApiError(400, f"Value for '{field}' not supported. {detail}", field=field, valid=valid)


def not_specified(field: str) -> ApiError:
    return ApiError(400, f"Parameter '{field}' not specified.", type="missing_field", field=field)


@dataclass(frozen=True)
class DeepLTranslate:
    """A checked /v2/translate request.

    Attributes:
        texts: the items (at most MAX_TEXTS).
        target / target_code: the target language and the code the client sent (upper case).
        source / source_code: the source language and code, or None to detect.
        context: text the items follow (not translated, not billed).
        formality: one of FORMALITY.
        tag_handling: "xml", "html" or None; tag_handling_version echoes the request.
        tag_rules: ignore_tags, splitting_tags, non_splitting_tags, outline_detection.
        model_type: one of MODEL_TYPES, or None when not asked.
        glossary_ids: glossary_id, or glossary_ids, in order.
        inline_glossary: hymt's own `glossary` field ({source: target} or pairs).
        style_id: the target style, for families with a style template.
        custom_instructions: instructions for families with a personalization template.
        split_sentences: False for split_sentences=0 (each item one request); "1" and
            "nonewlines" split at sentence ends (hymt's text formats decide line breaks).
    """

    texts: tuple[str, ...]
    target: Language
    target_code: str
    source: Language | None
    source_code: str | None
    context: str | None
    formality: str
    tag_handling: str | None
    tag_handling_version: str | None
    tag_rules: TagRules
    model_type: str | None
    glossary_ids: tuple[str, ...]
    inline_glossary: Glossary
    style_id: str | None
    custom_instructions: tuple[str, ...]
    split_sentences: bool


def read_translate(body: Mapping[str, Any]) -> DeepLTranslate:
    """`body` (JSON or form, read_body's dict) as a DeepLTranslate; 400 in DeepL's words."""
    return read_request(body, tuple(_texts(body)))


def read_request(body: Mapping[str, Any], texts: tuple[str, ...]) -> DeepLTranslate:
    """The fields /v2/translate and /v2/document share (a document's texts are its file's)."""
    target_code = _string(body, "target_lang")
    if not target_code:
        raise not_specified("target_lang")
    source_code = _string(body, "source_lang") or None
    if source_code is not None and source_code.lower() == "auto":  # DeepLX-style clients send it
        source_code = None
    tag_handling = _choice(body, "tag_handling", TAG_HANDLING)
    split_sentences = _choice(body, "split_sentences", SPLIT_SENTENCES) != "0"
    for name in ("preserve_formatting", "show_billed_characters"):
        _flag(body, name, False)
    glossary_ids = _glossary_ids(body)
    if glossary_ids and source_code is None:
        raise ApiError(400, "Use of a glossary requires the source_lang parameter to be specified", field="source_lang")
    if body.get("translation_memory_id") is not None:
        raise not_supported("translation_memory_id", "hymt keeps no translation memories; leave it out.")
    return DeepLTranslate(
        texts=texts,
        target=_language(target_code, "target_lang", "target"),
        target_code=target_code.upper(),
        source=_language(source_code, "source_lang", "source") if source_code else None,
        source_code=source_code.upper() if source_code else None,
        context=_string(body, "context") or None,
        formality=_choice(body, "formality", FORMALITY) or "default",
        tag_handling=tag_handling,
        tag_handling_version=_choice(body, "tag_handling_version", TAG_HANDLING_VERSIONS),
        tag_rules=_tag_rules(body, lower=tag_handling == "html"),
        model_type=_choice(body, "model_type", MODEL_TYPES),
        glossary_ids=glossary_ids,
        inline_glossary=get_glossary(body),
        style_id=_style_id(body),
        custom_instructions=_instructions(body),
        split_sentences=split_sentences,
    )


def _texts(body: Mapping[str, Any]) -> list[str]:
    value = body.get("text")
    items = [value] if isinstance(value, str) else value
    if not items:
        raise not_specified("text")
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        raise ApiError(422, "text must be a string or a list of strings", type="invalid_type", field="text")
    if len(items) > MAX_TEXTS:
        raise ApiError(413, f"text has {len(items)} items; DeepL's limit is {MAX_TEXTS} per request",
                       type="too_large", field="text")
    return items


def _string(body: Mapping[str, Any], field: str) -> str | None:
    value = body.get(field)
    if isinstance(value, list) and len(value) == 1:  # a form field sent once as `field[]`
        value = value[0]
    if value is None or isinstance(value, str):
        return value.strip() if isinstance(value, str) else None
    raise ApiError(422, f"{field} must be a string, got {type(value).__name__}", type="invalid_type", field=field)


def _choice(body: Mapping[str, Any], field: str, valid: tuple[str, ...]) -> str | None:
    value = body.get(field)
    if value is None or value == "":
        return None
    text = str(int(value)) if isinstance(value, int) and not isinstance(value, bool) else value
    if not isinstance(text, str) or text.strip().lower() not in valid:
        raise not_supported(field, f"Got {value!r}; valid: {', '.join(valid)}.", valid)
    return text.strip().lower()


def _flag(body: Mapping[str, Any], field: str, default: bool) -> bool:
    value = body.get(field)
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    key = str(value).strip().lower() if isinstance(value, (str, int)) else None
    if key not in _FLAGS:
        raise not_supported(field, f"Got {value!r}; valid: 0, 1, true, false.", ("0", "1", "true", "false"))
    return _FLAGS[key]


def _language(code: str, field: str, kind: str) -> Language:
    try:
        return get_language(code, field=field)
    except UnknownLanguageError:
        raise not_supported(field, f"{code!r} is not a language this server translates; valid: "
                                   f"{', '.join(deepl_codes(kind))}.", deepl_codes(kind)) from None


def _names(body: Mapping[str, Any], field: str) -> tuple[str, ...]:
    """A list field sent as an array, repeated form fields or comma-separated text."""
    value = body.get(field)
    if value is None:
        return ()
    items = value if isinstance(value, list) else [value]
    if not all(isinstance(item, str) for item in items):
        raise ApiError(422, f"{field} must be a list of strings or comma-separated text", type="invalid_type",
                       field=field)
    return tuple(name.strip() for item in items for name in item.split(",") if name.strip())


def _tag_rules(body: Mapping[str, Any], *, lower: bool) -> TagRules:
    """HTML element names compare case-insensitively (lower-cased here); XML names as given."""
    def names(field: str) -> frozenset[str]:
        return frozenset(n.lower() if lower else n for n in _names(body, field))

    return TagRules(ignore=names("ignore_tags"), splitting=names("splitting_tags"),
                    non_splitting=names("non_splitting_tags"),
                    outline_detection=_flag(body, "outline_detection", True))


def _glossary_ids(body: Mapping[str, Any]) -> tuple[str, ...]:
    single = _string(body, "glossary_id")
    several = _names(body, "glossary_ids")
    if single and several:
        raise ApiError(400, "Parameters 'glossary_id' and 'glossary_ids' cannot be used together.",
                       field="glossary_ids")
    if len(several) > MAX_GLOSSARY_IDS:
        raise not_supported("glossary_ids", f"Got {len(several)} glossary IDs; at most {MAX_GLOSSARY_IDS}.")
    return (single,) if single else several


def _style_id(body: Mapping[str, Any]) -> str | None:
    value = _string(body, "style_id")
    if not value:
        return None
    try:
        uuid.UUID(value)
    except ValueError:
        return value
    raise not_supported("style_id", "hymt keeps no style rule lists, so an ID names nothing here; send the "
                                    "style itself (for example 'formal business English').")


def _instructions(body: Mapping[str, Any]) -> tuple[str, ...]:
    value = body.get("custom_instructions")
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(item, str) and item.strip() for item in items):
        raise not_supported("custom_instructions", "Send a list of non-empty strings.")
    if len(items) > MAX_CUSTOM_INSTRUCTIONS:
        raise not_supported("custom_instructions", f"Got {len(items)} instructions; at most {MAX_CUSTOM_INSTRUCTIONS}.")
    longest = max(len(item) for item in items)
    if longest > MAX_INSTRUCTION_CHARS:
        raise not_supported("custom_instructions", f"An instruction has {longest} characters; at most "
                                                   f"{MAX_INSTRUCTION_CHARS}.")
    return tuple(item.strip() for item in items)
