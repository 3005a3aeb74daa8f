"""LibreTranslate (1.9.x shapes, docs/reference/protocols.md §2.2), at the root and under /libretranslate.

    POST /translate  {q: str | [str], source: code | "auto", target, format: text | html,
                      alternatives: int, api_key}  (JSON or form)
      -> {translatedText: str | [str], detectedLanguage (source=auto: per item for a list),
          alternatives (when asked)}
    POST /detect {q} -> [{language, confidence 0-100}]
    GET  /languages  -> [{code, name, targets}]

Alternatives are real: `alternatives=n` (at most 3, text format only) runs n more
translations of each item with the family's official sampled decoding next to the greedy
one, in the same engine batch; the distinct answers that differ from the main one are
returned, so there may be fewer than n. Errors: {"error": "..."} with 400 / 403 / 429 / 500.
"""
from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Depends, Request

from hymt.server import language_codes
from hymt.server.auth import require_key
from hymt.server.body import get_int, get_str, get_texts, read_body
from hymt.server.errors import ApiError, set_protocol
from hymt.server.jobs.intake import supported_suffixes
from hymt.server.model_work import execute
from hymt.server.request_fields import check_limits, language, target_language
from hymt.server.state import state_of
from hymt.server.translation_job import TranslationJob
from hymt.translate.options import TranslateOptions
from hymt.translate.result import TranslationResult
from hymt.translate.sampling_policy import Sampling

ALTERNATIVES_LIMIT = 3
FORMATS = ("text", "html")


def build_router(prefix: str) -> APIRouter:
    """The LibreTranslate routes under `prefix`; root /translate lives in root_translate.py."""
    router = APIRouter(prefix=prefix)
    deps = [Depends(require_key)]
    if prefix:
        router.add_api_route("/translate", translate, methods=["POST"], dependencies=deps)
    router.add_api_route("/detect", detect, methods=["POST"], dependencies=deps)
    router.add_api_route("/languages", languages, methods=["GET", "POST"])
    router.add_api_route("/frontend/settings", frontend_settings, methods=["GET"])
    return router


async def translate(request: Request) -> dict[str, Any]:
    """POST /translate."""
    set_protocol(request, "libretranslate")
    body = await read_body(request)
    st = state_of(request)
    texts, was_list = get_texts(body, "q")
    check_limits(texts, st.settings, field="q")
    source_code = get_str(body, "source", "auto")
    fmt = (get_str(body, "format", "text") or "text").lower()
    if fmt not in FORMATS:
        raise ApiError(400, f"unsupported format {fmt!r}; valid: text, html", field="format", valid=FORMATS)
    wanted = get_int(body, "alternatives", 0) or 0
    if wanted < 0:
        raise ApiError(400, "alternatives must be >= 0", field="alternatives")
    if wanted > ALTERNATIVES_LIMIT:
        raise ApiError(400, f"alternatives must be <= {ALTERNATIVES_LIMIT}", field="alternatives")
    job = TranslationJob(
        texts=tuple(texts),
        target=target_language(get_str(body, "target", required=True), "target"),
        source=language(source_code, "source", allow_auto=True),
        options=TranslateOptions(format=fmt, use_cache=st.settings.cache),
    )
    n_alt = wanted if fmt == "text" else 0

    async def work() -> list[list[TranslationResult]]:
        jobs = [job] + [_alternative(job) for _ in range(n_alt)]
        return await asyncio.gather(*(st.service.translate(j) for j in jobs))

    main, *alternatives = await execute(request, work, texts=len(texts) * (1 + n_alt))
    st.metrics.observe_results("libretranslate", main)
    return _response(main, alternatives, was_list, job.source is None, wanted > 0)


def _alternative(job: TranslationJob) -> TranslationJob:
    """The same job with the family's official sampling (docs/reference/models.md §8): the
    variety alternatives need."""
    options = job.options.replace(sampling=Sampling(preset="official"), use_cache=False)
    return TranslationJob(job.texts, job.target, job.source, options)


def _response(main: list[TranslationResult], alternatives: list[list[TranslationResult]], was_list: bool,
              detected: bool, asked: bool) -> dict[str, Any]:
    items: list[tuple[TranslationResult, list[str]]] = []
    for i, result in enumerate(main):
        alts = list(dict.fromkeys(a[i].text for a in alternatives if a[i].text != result.text))
        items.append((result, alts))
    out: dict[str, Any] = {"translatedText": [r.text for r, _ in items] if was_list else items[0][0].text}
    if detected:
        found = [_detected(r) for r, _ in items]
        out["detectedLanguage"] = found if was_list else found[0]
    if asked:
        per_item = [a for _, a in items]
        out["alternatives"] = per_item if was_list else per_item[0]
    return out


def _detected(result: TranslationResult) -> dict[str, Any]:
    detection = result.detection
    lang = detection.language if detection is not None else result.source
    if lang is None:  # nothing translatable: LibreTranslate answers en / 0
        return {"language": "en", "confidence": 0}
    confidence = detection.confidence if detection is not None else 1.0
    return {"language": language_codes.code_for(lang, "libretranslate"),
            "confidence": round(float(confidence) * 100, 1)}


async def detect(request: Request) -> list[dict[str, Any]]:
    """POST /detect {q} -> [{language, confidence}] (most likely first)."""
    set_protocol(request, "libretranslate")
    body = await read_body(request)
    st = state_of(request)
    text = get_str(body, "q", required=True)
    check_limits([text], st.settings, field="q")
    if not text.strip():
        raise ApiError(400, "q must not be empty", field="q")
    found = await execute(request, lambda: st.service.detect(text))
    if found.language is None:
        return [{"language": "en", "confidence": 0}]
    return [{"language": language_codes.code_for(found.language, "libretranslate"),
             "confidence": round(float(found.confidence) * 100, 1)}]


async def languages() -> list[dict[str, Any]]:
    """GET /languages."""
    return language_codes.libretranslate_languages()


async def frontend_settings(request: Request) -> dict[str, Any]:
    """GET /frontend/settings: what LibreTranslate front ends read before translating."""
    st = state_of(request)
    return {
        "apiKeys": bool(st.settings.api_keys),
        "keyRequired": bool(st.settings.api_keys),
        "charLimit": st.settings.max_chars,
        "frontendTimeout": int(st.settings.request_timeout * 1000),
        "suggestions": False,
        "filesTranslation": True,  # /translate_file (libretranslate_files.py)
        "supportedFilesFormat": supported_suffixes(),
        "language": {"source": {"code": "auto", "name": "Auto Detect"},
                     "target": {"code": "zh-Hans", "name": "Chinese"}},
    }
