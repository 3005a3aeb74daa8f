"""Immersive Translate's custom API (docs/reference/protocols.md §2.5), at /imme (and root /translate).

    POST /imme?token=K {source_lang: code | "auto", target_lang, text_list: [str]}
      -> {"translations": [{"detected_source_lang", "text"}, ...]}  same order and count

Each item is its own engine request (never packed into one prompt); the list is capped by
--max-batch (413). Codes come back in Immersive's style (zh-CN, zh-TW, fil).
"""
from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request

from hymt.server import language_codes
from hymt.server.auth import require_key
from hymt.server.body import get_str, get_texts, read_body
from hymt.server.errors import set_protocol
from hymt.server.model_work import execute
from hymt.server.request_fields import check_limits, language, target_language
from hymt.server.state import state_of
from hymt.server.translation_job import TranslationJob
from hymt.translate.options import TranslateOptions

router = APIRouter()


@router.post("/imme", dependencies=[Depends(require_key)])
async def translate(request: Request) -> dict[str, Any]:
    set_protocol(request, "immersive")
    body = await read_body(request)
    st = state_of(request)
    texts, _ = get_texts(body, "text_list")
    check_limits(texts, st.settings, field="text_list")
    source_code = get_str(body, "source_lang", "auto")
    job = TranslationJob(texts=tuple(texts), target=target_language(get_str(body, "target_lang", required=True),
                                                                    "target_lang"),
                         source=language(source_code, "source_lang", allow_auto=True),
                         options=TranslateOptions(use_cache=st.settings.cache))
    results = await execute(request, lambda: st.service.translate(job), texts=len(texts))
    st.metrics.observe_results("immersive", results)
    return {
        "translations": [
            {"detected_source_lang": (source_code if job.source is not None
                                      else language_codes.code_for(r.source, "immersive")),
             "text": r.text}
            for r in results
        ]
    }
