"""DeepLX (docs/reference/protocols.md §2.4): the shape pot's "deeplx" mode and bob-plugin-deeplx read.

    POST /deeplx/translate, /v1/translate (and root /translate by sniffing)
      {text: str, source_lang: code | "auto", target_lang: code}
      -> {code: 200, id, data, alternatives: [], source_lang, target_lang, method: "hymt"}

Errors: {"code": <status>, "message": "..."}. Codes come back uppercase, as DeepLX sends them.
"""
from __future__ import annotations

import secrets
from typing import Any

from fastapi import APIRouter, Depends, Request

from hymt.server import language_codes
from hymt.server.auth import require_key
from hymt.server.body import get_str, read_body
from hymt.server.errors import ApiError, set_protocol
from hymt.server.model_work import execute
from hymt.server.request_fields import check_limits, language, target_language
from hymt.server.state import state_of
from hymt.server.translation_job import TranslationJob
from hymt.translate.options import TranslateOptions

router = APIRouter()


@router.post("/deeplx/translate", dependencies=[Depends(require_key)])
@router.post("/v1/translate", dependencies=[Depends(require_key)])
async def translate(request: Request) -> dict[str, Any]:
    set_protocol(request, "deeplx")
    body = await read_body(request)
    st = state_of(request)
    text = get_str(body, "text", required=True)
    if not text.strip():
        raise ApiError(400, "text must not be empty", field="text")
    check_limits([text], st.settings, field="text")
    target_code = get_str(body, "target_lang", required=True)
    source_code = get_str(body, "source_lang", "auto")
    job = TranslationJob(texts=(text,), target=target_language(target_code, "target_lang"),
                         source=language(source_code, "source_lang", allow_auto=True),
                         options=TranslateOptions(use_cache=st.settings.cache))
    (result,) = await execute(request, lambda: st.service.translate(job))
    st.metrics.observe_results("deeplx", [result])
    detected = language_codes.code_for(result.source, "deepl") if job.source is None else source_code.upper()
    return {
        "code": 200,
        "id": secrets.randbelow(10**10),
        "data": result.text,
        "alternatives": [],
        "source_lang": detected or "AUTO",
        "target_lang": target_code.upper(),
        "method": "hymt",
    }
