"""OpenAI (legacy) completions: POST /v1/completions, the shape vLLM / SGLang serve.

The prompt is sent to the engine as it is: a string (tokenized, no special tokens added),
or a list of token ids (what hymt's own `openai` engine backend sends, so one `hymt serve`
can be the engine of another). No prompt guard here: a completion prompt is already the
model input. vLLM's `return_token_ids` adds the generated ids to the choice.
"""
from __future__ import annotations

import secrets
import time
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from hymt.server.auth import require_key
from hymt.server.body import get_bool, get_int, read_body
from hymt.server.errors import ApiError
from hymt.server.model_work import execute, open_stream
from hymt.server.protocols.openai_api import (
    RawGeneration,
    apply_stops,
    error_chunk,
    parse_stops,
    raw_sampling,
    usage_of,
)
from hymt.server.request_fields import check_limits
from hymt.server.sse import event
from hymt.server.state import state_of
from hymt.translate.result import Generation

router = APIRouter(prefix="/v1", dependencies=[Depends(require_key)])


def parse_prompt(value: Any) -> str | list[int]:
    """A string, a token-id list, or a one-item list of either (n prompts are not batched here)."""
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], (str, list)):
        value = value[0]
    if isinstance(value, str) and value:
        return value
    if isinstance(value, list) and value and all(isinstance(t, int) and not isinstance(t, bool) for t in value):
        return value
    raise ApiError(400, "prompt must be a non-empty string or a list of token ids (one prompt per request)",
                   field="prompt")


def check_token_ids(ids: list[int], vocab_size: int) -> None:
    """400 unless every id is one of the model's (0 .. vocab_size - 1)."""
    bad = next((i for i, t in enumerate(ids) if not 0 <= t < vocab_size), None)
    if bad is not None:
        raise ApiError(400, f"prompt[{bad}] = {ids[bad]} is not a token id of this model (0 to {vocab_size - 1})",
                       field=f"prompt[{bad}]")


@router.post("/completions", response_model=None)
async def completions(request: Request) -> Response | dict[str, Any]:
    body = await read_body(request)
    st = state_of(request)
    prompt = parse_prompt(body.get("prompt"))
    if isinstance(prompt, str):
        check_limits([prompt], st.settings, field="prompt")
    if get_int(body, "n", 1) != 1:
        raise ApiError(400, "only n=1 is supported", field="n", valid=["1"])
    translator = st.service.require_ready()
    if isinstance(prompt, list):
        check_token_ids(prompt, translator.checkpoint.vocab_size)
    run = RawGeneration(st, prompt, raw_sampling(body, translator.family.default_sampling))
    stops = parse_stops(body.get("stop"))
    meta = {"id": f"cmpl-{secrets.token_hex(12)}", "created": int(time.time()), "model": st.settings.model_id}
    with_ids = get_bool(body, "return_token_ids", False)
    if get_bool(body, "stream", False):
        return open_stream(request, lambda: _stream(run, meta, stops), error_chunk)
    output = await execute(request, run.complete)
    text, reason = apply_stops(output.text, stops, output.finish_reason)
    choice: dict[str, Any] = {"index": 0, "text": text, "logprobs": None, "finish_reason": reason}
    if with_ids:
        choice["token_ids"] = list(output.token_ids)
    return {**meta, "object": "text_completion", "choices": [choice], "usage": usage_of(output)}


async def _stream(run: RawGeneration, meta: dict, stops: tuple[str, ...]) -> AsyncIterator[str]:
    sent, reason = "", None
    pieces = run.pieces()
    try:
        async for piece in pieces:
            if isinstance(piece, Generation):
                reason = piece.finish_reason
                break
            text, cut = apply_stops(sent + piece, stops, "")
            if text[len(sent):]:
                yield _chunk(meta, text[len(sent):], None)
                sent = text
            if cut == "stop":
                reason = "stop"
                break
    finally:
        await pieces.aclose()
    yield _chunk(meta, "", reason or "stop")
    yield "data: [DONE]\n\n"


def _chunk(meta: dict, text: str, reason: str | None) -> str:
    return event({**meta, "object": "text_completion",
                  "choices": [{"index": 0, "text": text, "logprobs": None, "finish_reason": reason}]})
