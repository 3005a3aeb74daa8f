"""DeepL API v2 subset (docs/reference/protocols.md §2.3), at /v2/... and /deepl/v2/...

    POST /v2/translate  JSON or form (repeated `text=`): text[] (<= 50), target_lang,
         source_lang (omitted = detect), context, formality, glossary_id, tag_handling
         (html|xml -> the formatted path), split_sentences / preserve_formatting (accepted),
         and the non-standard inline `glossary` ({src: tgt} or [[src, tgt], ...])
      -> {"translations": [{"detected_source_language", "text", "billed_characters"}]}
    GET  /v2/languages?type=source|target, /v2/usage, /v2/glossary-language-pairs
    /v2/glossaries: in-memory glossaries (deepl_glossaries.py)

Auth: `Authorization: DeepL-Auth-Key K`. Errors: {"message": "..."}; 403 on a bad key.
`formality` maps to the style template on families that have one (Hy-MT2), else is ignored,
as DeepL ignores it for languages without formality.
"""
from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request

from hymt.server import language_codes
from hymt.server.auth import require_key
from hymt.server.body import get_glossary, get_str, get_texts, read_body
from hymt.server.errors import ApiError, set_protocol
from hymt.server.model_work import execute
from hymt.server.protocols import deepl_glossaries
from hymt.server.request_fields import check_limits, language, target_language
from hymt.server.state import ServerState, state_of
from hymt.server.translation_job import TranslationJob
from hymt.translate.options import TranslateOptions

MAX_TEXTS = 50
TAG_HANDLING = ("html", "xml")
FORMALITY = ("default", "more", "less", "prefer_more", "prefer_less")
_STYLE = {"more": "formal", "prefer_more": "formal", "less": "informal", "prefer_less": "informal"}
CHARACTER_LIMIT = 10**12  # no quota: clients that check usage see plenty left


def build_router(prefix: str) -> APIRouter:
    router = APIRouter(prefix=f"{prefix}/v2", dependencies=[Depends(require_key)])
    router.add_api_route("/translate", translate, methods=["POST"])
    router.add_api_route("/languages", languages, methods=["GET", "POST"])
    router.add_api_route("/usage", usage, methods=["GET", "POST"])
    deepl_glossaries.add_routes(router)
    return router


async def translate(request: Request) -> dict[str, Any]:
    set_protocol(request, "deepl")
    body = await read_body(request)
    st = state_of(request)
    texts, _ = get_texts(body, "text")
    check_limits(texts, st.settings, field="text", max_items=MAX_TEXTS)
    target_code = get_str(body, "target_lang", required=True)
    source_code = get_str(body, "source_lang") or None
    tag_handling = (get_str(body, "tag_handling") or "").lower() or None
    if tag_handling is not None and tag_handling not in TAG_HANDLING:
        raise ApiError(400, f"Value for 'tag_handling' not supported; valid: {', '.join(TAG_HANDLING)}",
                       field="tag_handling", valid=TAG_HANDLING)
    formality = (get_str(body, "formality") or "default").lower()
    if formality not in FORMALITY:
        raise ApiError(400, f"Value for 'formality' not supported; valid: {', '.join(FORMALITY)}",
                       field="formality", valid=FORMALITY)
    glossary = get_glossary(body) + _stored_glossary(request, body, source_code)
    options = TranslateOptions(glossary=glossary, context=get_str(body, "context") or None,
                               style=_style(st, formality), format="html" if tag_handling else "text",
                               use_cache=st.settings.cache)
    job = TranslationJob(texts=tuple(texts), target=target_language(target_code, "target_lang"),
                         source=language(source_code, "source_lang", allow_auto=True), options=options)
    results = await execute(request, lambda: st.service.translate(job), texts=len(texts))
    st.metrics.observe_results("deepl", results)
    usage_counter = st.extras.setdefault("deepl_characters", [0])
    usage_counter[0] += job.chars
    return {
        "translations": [
            {"detected_source_language": source_code.upper() if source_code else language_codes.code_for(r.source, "deepl"),
             "text": r.text, "billed_characters": len(text)}
            for r, text in zip(results, texts)
        ]
    }


def _stored_glossary(request: Request, body: dict, source_code: str | None) -> tuple[tuple[str, str], ...]:
    glossary_id = get_str(body, "glossary_id")
    if not glossary_id:
        return ()
    if not source_code:
        raise ApiError(400, "glossary_id requires source_lang", field="source_lang")
    return deepl_glossaries.entries_of(request, glossary_id)


def _style(st: ServerState, formality: str) -> str | None:
    style = _STYLE.get(formality)
    if style is None:
        return None
    translator = st.service.require_ready()
    return style if "style" in translator.family.templates else None


async def languages(request: Request) -> list[dict[str, Any]]:
    body = await read_body(request)
    kind = (get_str(body, "type", "source") or "source").lower()
    if kind not in ("source", "target"):
        raise ApiError(400, "Value for 'type' not supported; valid: source, target", field="type",
                       valid=["source", "target"])
    return language_codes.deepl_languages(kind)


async def usage(request: Request) -> dict[str, Any]:
    counter = state_of(request).extras.get("deepl_characters", [0])
    return {"character_count": counter[0], "character_limit": CHARACTER_LIMIT}
