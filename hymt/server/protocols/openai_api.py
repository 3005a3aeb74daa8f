"""OpenAI Chat Completions (docs/reference/protocols.md §2.1): /v1/chat/completions and /v1/models.

Every chat goes through the prompt guard (prompt_guard.py); the response header
`X-Hymt-Prompt-Guard` says `rewritten` (a generic translation prompt was translated
paragraph by paragraph with the official template) or `passthrough` (sent as given), and
`X-Hymt-Prompt-Kind` which kind of chat it was (official, generic, chat).

Any `model` id is accepted (clients hard-code names); responses name the served model.
Only n=1. Sampling: temperature, top_p, top_k, repetition_penalty, max_tokens /
max_completion_tokens, seed, ignore_eos, stop_token_ids, stop (strings, cut from the text);
presence/frequency penalties, min_p, logprobs are accepted and ignored.
Errors: {"error": {"message", "type", "param", "code"}}.
"""
from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response

from hymt.engine.sampling import SamplingParams
from hymt.errors import InvalidInputError
from hymt.server.auth import require_key
from hymt.server.body import get_bool, get_float, get_int, get_object, read_body
from hymt.server.errors import ApiError, render_error
from hymt.server.model_work import execute, open_stream
from hymt.server.protocols import prompt_guard
from hymt.server.protocols.chat_render import render_messages
from hymt.server.request_fields import check_limits, sampling_of
from hymt.server.service import StreamPiece
from hymt.server.sse import event
from hymt.server.state import ServerState, state_of
from hymt.server.translation_job import TranslationJob
from hymt.translate.options import TranslateOptions
from hymt.translate.result import Generation, TranslationResult
from hymt.translate.sampling_policy import Sampling

router = APIRouter(prefix="/v1", dependencies=[Depends(require_key)])
ROLES = ("system", "developer", "user", "assistant", "tool")


@router.get("/models")
async def models(request: Request) -> dict[str, Any]:
    """The served model and the aliases a client may pick. Any `model` is accepted on the
    completion routes (clients hard-code names); the answer always names the served model."""
    st = state_of(request)
    created = int(st.service.ready_at or st.started_at)
    names = [st.settings.model_id, *st.service.model_aliases()]
    return {"object": "list", "data": [{"id": name, "object": "model", "created": created, "owned_by": "hymt"}
                                       for name in dict.fromkeys(names)]}


@router.post("/chat/completions")
async def chat_completions(request: Request) -> Response:
    body = await read_body(request)
    st = state_of(request)
    messages = parse_messages(body.get("messages"))
    check_limits([m["content"] for m in messages], st.settings, field="messages", max_items=10**6)
    n = get_int(body, "n", 1)
    if n != 1:
        raise ApiError(400, "only n=1 is supported", field="n", valid=["1"])
    stream = get_bool(body, "stream", False)
    include_usage = get_bool(get_object(body, "stream_options") or {}, "include_usage", False)
    stops = parse_stops(body.get("stop"))
    guard = prompt_guard.plan(messages) if st.settings.prompt_guard else prompt_guard.GuardPlan("chat")
    headers = {"X-Hymt-Prompt-Guard": "rewritten" if guard.kind == "generic" else "passthrough",
               "X-Hymt-Prompt-Kind": guard.kind}
    meta = {"id": f"chatcmpl-{secrets.token_hex(12)}", "created": int(time.time()), "model": st.settings.model_id}
    run: RawGeneration | _Rewritten
    if guard.kind == "generic":
        run = _Rewritten(st, guard, translation_sampling(body))
    else:
        translator = st.service.require_ready()
        prompt = render_messages(translator.family, translator.checkpoint, messages)
        run = RawGeneration(st, prompt, raw_sampling(body, translator.family.default_sampling))
    texts = run.texts if isinstance(run, _Rewritten) else 1
    if stream:
        chunks = lambda: _stream_chunks(run, meta, stops, include_usage)  # noqa: E731
        return open_stream(request, chunks, error_chunk, headers=headers, texts=texts)
    output = await execute(request, run.complete, texts=texts)
    text, reason = apply_stops(output.text, stops, output.finish_reason)
    return JSONResponse(_completion(meta, text, reason, output), headers=headers)


def parse_messages(value: Any) -> list[dict[str, str]]:
    """Messages with plain-text content; a list of parts keeps its text parts."""
    if not isinstance(value, list) or not value:
        raise ApiError(400 if value is None else 422, "messages must be a non-empty list of {role, content}",
                       type="invalid_type", field="messages")
    out = []
    for i, message in enumerate(value):
        if not isinstance(message, dict):
            raise ApiError(422, f"messages[{i}] must be an object", type="invalid_type", field=f"messages[{i}]")
        role = message.get("role")
        if role not in ROLES:
            raise ApiError(400, f"messages[{i}].role must be one of {', '.join(ROLES)}, got {role!r}",
                           field=f"messages[{i}].role", valid=ROLES)
        out.append({"role": role, "content": _content(message.get("content"), i)})
    return out


def _content(content: Any, i: int) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list):
        texts = []
        for j, part in enumerate(content):
            if not isinstance(part, dict) or part.get("type") != "text" or not isinstance(part.get("text"), str):
                raise ApiError(400, f"messages[{i}].content[{j}]: only {{\"type\": \"text\", \"text\": ...}} parts "
                               "are supported", field=f"messages[{i}].content[{j}]", valid=["text"])
            texts.append(part["text"])
        return "".join(texts)
    raise ApiError(422, f"messages[{i}].content must be a string or a list of text parts", type="invalid_type",
                   field=f"messages[{i}].content")


def sampling_values(body: dict[str, Any]) -> dict[str, object]:
    """The OpenAI/vLLM sampling fields a request sets, validated by type."""
    values: dict[str, object] = {}
    for name in ("temperature", "top_p", "repetition_penalty"):
        if (value := get_float(body, name)) is not None:
            values[name] = value
    for name in ("top_k", "seed"):
        if (value := get_int(body, name)) is not None:
            values[name] = value
    max_tokens = get_int(body, "max_completion_tokens") or get_int(body, "max_tokens")
    if max_tokens is not None:
        values["max_tokens"] = max_tokens
    if body.get("ignore_eos") is not None:
        values["ignore_eos"] = get_bool(body, "ignore_eos", False)
    ids = body.get("stop_token_ids")
    if ids is not None:
        if not isinstance(ids, list) or not all(isinstance(t, int) and not isinstance(t, bool) for t in ids):
            raise ApiError(422, "stop_token_ids must be a list of integers", type="invalid_type",
                           field="stop_token_ids")
        values["stop_token_ids"] = tuple(ids)
    return values


def raw_sampling(body: dict[str, Any], base: SamplingParams) -> SamplingParams:
    """A raw generation's sampling: the request's fields over the family's official values."""
    sampling = sampling_of(sampling_values(body), "sampling")
    try:
        return base.replace(**sampling.explicit())
    except InvalidInputError as exc:  # a combination the fields alone did not rule out
        raise ApiError(400, str(exc), field=exc.field) from None


def translation_sampling(body: dict[str, Any]) -> Sampling:
    """A rewritten chat's sampling: greedy, or the official sampled preset when the client asks
    for a temperature; the fields it sets override the preset."""
    values = sampling_values(body)
    temperature = values.get("temperature")
    preset = "official" if isinstance(temperature, float) and temperature > 0 else "greedy"
    try:
        return Sampling(preset=preset, **values)  # type: ignore[arg-type]
    except InvalidInputError as exc:
        raise ApiError(400, str(exc), field=exc.field.split(".", 1)[-1] if exc.field else None) from None


def parse_stops(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,) if value else ()
    if isinstance(value, list) and all(isinstance(s, str) for s in value):
        return tuple(s for s in value if s)
    raise ApiError(422, "stop must be a string or a list of strings", type="invalid_type", field="stop")


def apply_stops(text: str, stops: tuple[str, ...], reason: str) -> tuple[str, str]:
    cut = min((i for i in (text.find(s) for s in stops) if i >= 0), default=-1)
    return (text[:cut], "stop") if cut >= 0 else (text, reason)


class RawGeneration:
    """A chat sent to the engine as rendered."""

    def __init__(self, st: ServerState, prompt: str | list[int], params: SamplingParams):
        self.st, self.prompt, self.params = st, prompt, params

    async def complete(self) -> Generation:
        return await self.st.service.generate(self.prompt, self.params)

    def pieces(self) -> AsyncGenerator[str | Generation, None]:
        return self.st.service.stream_generate(self.prompt, self.params)


class _Rewritten:
    """A generic translation prompt: one official-template translation per paragraph, all
    submitted at once (the engine batches them) and streamed token by token in order."""

    def __init__(self, st: ServerState, guard: prompt_guard.GuardPlan, sampling: Sampling):
        self.st, self.guard, self.sampling = st, guard, sampling

    @property
    def texts(self) -> int:
        """The engine requests this chat becomes (its admission weight): one per paragraph."""
        return max(1, sum(1 for p in self.guard.paragraphs if p.strip()))

    def _job(self, paragraph: str) -> TranslationJob:
        assert self.guard.target is not None  # a generic plan always names its target
        options = TranslateOptions(sampling=self.sampling, use_cache=self.st.settings.cache)
        return TranslationJob(texts=(paragraph,), target=self.guard.target, source=self.guard.source,
                              options=options)

    async def complete(self) -> Generation:
        tasks = [asyncio.ensure_future(self.st.service.translate(self._job(p))) if p.strip() else None
                 for p in self.guard.paragraphs]
        try:
            done = [await t if t is not None else None for t in tasks]
        finally:
            for t in tasks:
                if t is not None and not t.done():
                    t.cancel()
        return self._output([r[0] if r else None for r in done])

    async def pieces(self) -> AsyncGenerator[str | Generation, None]:
        queues: list[asyncio.Queue[StreamPiece | BaseException] | None] = [
            asyncio.Queue() if p.strip() else None for p in self.guard.paragraphs]
        tasks = [asyncio.ensure_future(self._pump(p, q)) for p, q in zip(self.guard.paragraphs, queues)
                 if q is not None]
        results: list[TranslationResult | None] = []
        try:
            for paragraph, separator, queue in zip(self.guard.paragraphs, self.guard.separators, queues):
                if queue is None:
                    results.append(None)
                    yield paragraph + separator
                    continue
                while True:
                    item = await queue.get()
                    if isinstance(item, BaseException):
                        raise item
                    if item.result is not None:
                        results.append(item.result)
                        break
                    yield item.text
                yield separator
        finally:
            for task in tasks:
                task.cancel()
        yield self._output(results)

    async def _pump(self, paragraph: str, queue: asyncio.Queue[StreamPiece | BaseException]) -> None:
        try:
            async for piece in self.st.service.stream(self._job(paragraph)):
                queue.put_nowait(piece)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # the consumer raises it in order
            queue.put_nowait(exc)

    def _output(self, results: list[TranslationResult | None]) -> Generation:
        texts = [r.text if r is not None else p for r, p in zip(results, self.guard.paragraphs)]
        real = [r for r in results if r is not None]
        self.st.metrics.observe_results("openai", real)
        reason = "length" if any("length" in r.issues for r in real) else "stop"
        # usage counts the answer returned, not a quality retry's discarded tokens
        return Generation(self.guard.join(texts), sum(r.prompt_tokens for r in real),
                          sum(r.answer_tokens for r in real), reason)


def usage_of(output: Generation) -> dict[str, int]:
    return {"prompt_tokens": output.prompt_tokens, "completion_tokens": output.completion_tokens,
            "total_tokens": output.prompt_tokens + output.completion_tokens}


def _completion(meta: dict[str, Any], text: str, reason: str, output: Generation) -> dict[str, Any]:
    return {**meta, "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "logprobs": None,
                         "finish_reason": reason}],
            "usage": usage_of(output)}


def _chunk(meta: dict, delta: dict, reason: str | None = None) -> str:
    return event({**meta, "object": "chat.completion.chunk",
                  "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": reason}]})


async def _stream_chunks(run: RawGeneration | _Rewritten, meta: dict[str, Any], stops: tuple[str, ...],
                         include_usage: bool) -> AsyncIterator[str]:
    yield _chunk(meta, {"role": "assistant", "content": ""})
    sent, output, reason = "", None, None
    pieces = run.pieces()
    try:
        async for piece in pieces:
            if isinstance(piece, Generation):
                output = piece
                break
            text, cut = apply_stops(sent + piece, stops, "")
            if text[len(sent):]:
                yield _chunk(meta, {"content": text[len(sent):]})
                sent = text
            if cut == "stop":  # a stop string: the rest is not wanted, its engine request ends
                reason = "stop"
                break
    finally:
        await pieces.aclose()
    yield _chunk(meta, {}, reason or (output.finish_reason if output else "stop"))
    if include_usage:
        usage = usage_of(output) if output else {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
        yield event({**meta, "object": "chat.completion.chunk", "choices": [], "usage": usage})
    yield "data: [DONE]\n\n"


def error_chunk(err: ApiError) -> str:
    return "data: " + bytes(render_error("openai", err).body).decode() + "\n\n" + "data: [DONE]\n\n"
