"""The DeepL API as DeepL's client libraries call it (docs/reference/protocols.md §2.3), at /v2/...
and /v3/glossaries, and the same under /deepl/.

    POST /v2/translate   JSON or form: text[] (<= 50), target_lang, source_lang (omitted or
         "auto": detected per item), context, formality, glossary_id | glossary_ids (<= 5),
         tag_handling (xml | html) with ignore_tags, splitting_tags, non_splitting_tags,
         outline_detection and tag_handling_version, model_type, style_id,
         custom_instructions (<= 10), split_sentences (0: each item one request; 1 and
         nonewlines: split at sentence ends), and hymt's inline `glossary` ({src: tgt} or
         pairs). Checked but without effect: preserve_formatting,
         show_billed_characters (billed_characters is always sent). Refused:
         translation_memory_id (no translation memories here).
      -> {"translations": [{"detected_source_language", "text", "billed_characters",
          "model_type_used" (when model_type was sent), "tag_handling_version" (with tag_handling)}]}
    GET  /v2/languages?type=source|target, /v2/usage
    /v2/glossaries, /v2/glossary-language-pairs (deepl_glossaries.py), /v3/glossaries
         (deepl_v3_glossaries.py): one persistent store for both.

Auth: `Authorization: DeepL-Auth-Key K`. Errors: {"message": "..."} in DeepL's wording
(deepl_request.py); 403 on a bad key. Style fields map onto the family's templates as
deepl_instructions.py says. hymt serves one model: `model_type_used` is always
"quality_optimized", whatever was asked.
"""
from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request

from hymt.server import language_codes
from hymt.server.auth import require_key
from hymt.server.body import get_str, read_body
from hymt.server.errors import ApiError, set_protocol
from hymt.server.model_work import execute
from hymt.server.protocols import deepl_glossaries, deepl_v3_glossaries
from hymt.server.protocols.deepl_instructions import style_options, supports_formality
from hymt.server.protocols.deepl_request import MAX_TEXTS, DeepLTranslate, read_translate
from hymt.server.request_fields import check_limits
from hymt.server.state import state_of
from hymt.server.translation_job import TranslationJob
from hymt.translate.options import TranslateOptions
from hymt.translate.result import TranslationResult
from hymt.translate.text_formats import check_text_format

CHARACTER_LIMIT = 10**12  # no quota: clients that check usage see plenty left
#: The one model hymt serves, in DeepL's model_type terms.
MODEL_TYPE_USED = "quality_optimized"
#: DeepL's tag handling algorithm reported when the request names none (its documented default).
DEFAULT_TAG_HANDLING_VERSION = "v1"


async def _deepl_protocol(request: Request) -> None:
    """Errors on these routes, the key check's included, take DeepL's shape (/v3 too)."""
    set_protocol(request, "deepl")


def build_router(prefix: str) -> APIRouter:
    router = APIRouter(prefix=prefix, dependencies=[Depends(_deepl_protocol), Depends(require_key)])
    router.add_api_route("/v2/translate", translate, methods=["POST"])
    router.add_api_route("/v2/languages", languages, methods=["GET", "POST"])
    router.add_api_route("/v2/usage", usage, methods=["GET", "POST"])
    deepl_glossaries.add_routes(router)
    deepl_v3_glossaries.add_routes(router)
    return router


async def translate(request: Request) -> dict[str, Any]:
    body = await read_body(request)
    st = state_of(request)
    req = read_translate(body)
    check_limits(list(req.texts), st.settings, field="text", max_items=MAX_TEXTS)
    family = st.service.require_ready().family
    glossary = req.inline_glossary
    if req.glossary_ids:
        if req.source is None:
            raise ApiError(400, "Use of a glossary requires the source_lang parameter to be specified",
                           field="source_lang")
        glossary += await deepl_glossaries.translation_glossary(request, req.glossary_ids, req.source, req.target)
    style = style_options(family, req, glossary)
    options = TranslateOptions(glossary=glossary, context=style.context, style=style.style, template=style.template,
                               preferences=style.preferences, format=_text_format(req.tag_handling),
                               tag_rules=req.tag_rules, split_sentences=req.split_sentences,
                               use_cache=st.settings.cache)
    job = TranslationJob(texts=req.texts, target=req.target, source=req.source, options=options)
    results = await execute(request, lambda: st.service.translate(job), texts=len(req.texts))
    st.metrics.observe_results("deepl", results)
    usage_counter = st.extras.setdefault("deepl_characters", [0])
    usage_counter[0] += job.chars
    return {"translations": [_translation(req, result, text) for result, text in zip(results, req.texts)]}


def _translation(req: DeepLTranslate, result: TranslationResult, text: str) -> dict[str, Any]:
    """One item of the answer. The detected language is the detector's answer ("" when it
    had nothing to go by); a given source_lang is echoed, as DeepL does."""
    item: dict[str, Any] = {
        "detected_source_language": req.source_code or language_codes.code_for(result.source, "deepl"),
        "text": result.text,
        "billed_characters": len(text),
    }
    if req.model_type is not None:
        item["model_type_used"] = MODEL_TYPE_USED
    if req.tag_handling is not None:
        item["tag_handling_version"] = req.tag_handling_version or DEFAULT_TAG_HANDLING_VERSION
    return item


def _text_format(tag_handling: str | None) -> str:
    """The text format of a tag_handling value ("xml" and "html" are both formats of their own)."""
    return "text" if tag_handling is None else check_text_format(tag_handling, field="tag_handling")


async def languages(request: Request) -> list[dict[str, Any]]:
    body = await read_body(request)
    kind = (get_str(body, "type", "source") or "source").lower()
    if kind not in ("source", "target"):
        raise ApiError(400, "Parameter 'type' is invalid. 'source' and 'target' are valid values.", field="type",
                       valid=["source", "target"])
    service = state_of(request).service
    translator = service.translator if service.ready else None
    formality = translator is not None and supports_formality(translator.family)
    return language_codes.deepl_languages(kind, formality=formality)


async def usage(request: Request) -> dict[str, Any]:
    counter = state_of(request).extras.get("deepl_characters", [0])
    return {"character_count": counter[0], "character_limit": CHARACTER_LIMIT}
