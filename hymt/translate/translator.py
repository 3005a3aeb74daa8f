"""Translator: the public SDK object. One checkpoint, one engine, one AsyncEngine loop.

    tr = Translator("tencent/HY-MT1.5-1.8B")
    tr.translate("It's on the house.", to="zh").text
    tr.translate_batch(["...", "..."], to="ja")       # one engine batch, results in order
    tr.translate_document(book, to="de", format="markdown", progress=tqdm(...))
    for piece in tr.stream("...", to="fr"): ...        # text pieces; the stream's .result after

Every call goes through the one AsyncEngine (thread-safe), so a Translator may be shared by
threads and by the server's event loop (the `a*` twins).
"""
from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hymt.engine.backend_names import BACKENDS
from hymt.engine.config import EngineConfig
from hymt.engine.interface import Engine, EngineStats
from hymt.engine.sampling import SamplingParams
from hymt.errors import InvalidInputError
from hymt.families import DEFAULT_MODEL, ModelFamily
from hymt.languages import Language
from hymt.translate.cache import TranslationCache
from hymt.translate.detect import LanguageDetector
from hymt.translate.detokenize import IncrementalDecoder
from hymt.translate.file_translation import DocumentTranslation, document_format, document_translation, parse_file
from hymt.translate.fusion import candidate_requests, fused_result, fusion_request
from hymt.translate.loaded_model import LoadedModel
from hymt.translate.options import TranslateOptions, options_with
from hymt.translate.output_log import OutputLog
from hymt.translate.pipeline import Pipeline, Plan
from hymt.translate.progress import Progress, ProgressTarget
from hymt.translate.request import TranslationRequest, resolve_request
from hymt.translate.result import Detection, Generation, TranslationResult, translation_result
from hymt.translate.round_driver import drive_async, drive_blocking
from hymt.translate.segmentation import DEFAULT_MAX_SEGMENT_TOKENS
from hymt.translate.streaming import TranslationStream, astream_plan, stream_plan
from hymt.translate.text_formats import parse_texts

if TYPE_CHECKING:
    from hymt.checkpoint import Checkpoint

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class TranslatorInfo:
    """What a Translator runs: model id or path, family name, engine backend, device."""

    model: str
    family: str
    engine: str
    device: str

    def to_dict(self) -> dict[str, str]:
        return dataclasses.asdict(self)


class Translator:
    """Translate text, batches, documents and streams with one Hunyuan translation model.

    Args:
        model: a hub id or a local checkpoint directory.
        engine: "native", "transformers", "openai", or an `Engine` instance.
        device / dtype / quantization / engine_config: passed to the engine factory.
        family: the official family name; detected from the checkpoint when None.
        cache: True (the default SQLite file), False (no cache) or a file path.
        max_segment_tokens: the token budget of one segment.
        max_tokens: the most tokens any one answer may have, whatever a call asks for
            (a server operator's cap); None: no cap beyond each call's own.
        engine_options: backend-specific keywords for create_engine (e.g. the openai
            backend's base_url).
    """

    def __init__(
        self,
        model: str | Path = DEFAULT_MODEL,
        *,
        engine: str | Engine = "native",
        device: str | None = None,
        dtype: str | None = None,
        quantization: str | None = None,
        family: str | None = None,
        cache: bool | str | Path = True,
        engine_config: EngineConfig | None = None,
        max_segment_tokens: int = DEFAULT_MAX_SEGMENT_TOKENS,
        max_tokens: int | None = None,
        engine_options: dict[str, object] | None = None,
    ) -> None:
        from hymt.checkpoint import load_checkpoint
        from hymt.engine.async_engine import AsyncEngine
        from hymt.families import detect_family, get_family

        if max_tokens is not None and (not isinstance(max_tokens, int) or max_tokens < 1):
            raise InvalidInputError(f"max_tokens must be a positive integer or None, got {max_tokens!r}",
                                    field="max_tokens")
        checkpoint = load_checkpoint(model)
        fam = get_family(family) if family else detect_family(checkpoint)
        config = engine_config or EngineConfig()
        if quantization is not None:
            config = dataclasses.replace(config, quantization=quantization)
        model_id = str(Path(model).resolve()) if Path(model).exists() else str(model)
        self._model = LoadedModel(model_id, checkpoint, fam, fam.stop_token_ids(checkpoint), config.max_model_len)
        self._answer_cap = max_tokens
        self._cache = _open_cache(cache)  # before the engine: nothing to release if it fails
        backend, token_engine = _make_engine(engine, checkpoint, device, dtype, config, engine_options or {})
        self._detector = LanguageDetector()
        self._pipeline = Pipeline(self._model, cache=self._cache, detector=self._detector,
                                  max_segment_tokens=max_segment_tokens, answer_cap=max_tokens)
        self._engine = AsyncEngine(token_engine)
        self._closed = False
        self.info = TranslatorInfo(model_id, fam.name, backend, _device_of(token_engine, device))

    # -- blocking API ----------------------------------------------------------------------
    # Every call takes `options` (TranslateOptions) and/or its fields as keyword arguments
    # (glossary=, context=, style=, template=, format=, format_type=, preferences=,
    # candidates=, sampling=, use_cache=, retry=); the keywords override `options`.

    def translate(self, text: str, to: str | Language, source: str | Language | None = "auto", *,
                  options: TranslateOptions | None = None, **option_fields: object) -> TranslationResult:
        """Translate one text: segmented, every segment in one engine batch, reassembled.

        Args:
            text: the text (must not be blank).
            to / source: language codes, aliases or names; source "auto" detects it.
            options / option_fields: how to translate (see TranslateOptions).
        """
        request = self._request(to, source, options, option_fields)
        return self._translate([check_text(text)], request, None)[0]

    def translate_batch(self, texts: list[str], to: str | Language, source: str | Language | None = "auto", *,
                        options: TranslateOptions | None = None,
                        **option_fields: object) -> list[TranslationResult]:
        """Translate many texts; all their segments go to the engine at once; input order.
        Arguments as `translate`; the source is detected per text when "auto"."""
        request = self._request(to, source, options, option_fields)
        return self._translate(_check_texts(texts), request, None)

    def translate_document(self, text: str, to: str | Language, source: str | Language | None = "auto", *,
                           options: TranslateOptions | None = None, progress: ProgressTarget = None,
                           **option_fields: object) -> TranslationResult:
        """`translate` reporting progress over segments: `progress` is a callable
        (done, total) or a tqdm-like bar (its total is set, `update(n)` called)."""
        request = self._request(to, source, options, option_fields)
        return self._translate([check_text(text)], request, progress)[0]

    def stream(self, text: str, to: str | Language, source: str | Language | None = "auto", *,
               options: TranslateOptions | None = None, **option_fields: object) -> TranslationStream:
        """The translation in pieces as tokens arrive, segment after segment: iterate the
        returned stream for text (the pieces join to the whole translation, markup and
        whitespace kept); once they are all out, its `result` is the TranslationResult with
        the token counts. Streaming cannot take text back, so the quality guard records
        issues but does not retry here."""
        request = _unfused(self._request(to, source, options, option_fields), "stream")
        plan = self._plan([check_text(text)], request)
        return TranslationStream(stream_plan(self._pipeline, plan, self._engine))

    def translate_file(self, data: bytes, to: str | Language, source: str | Language | None = "auto", *,
                       format: str | None = None, filename: str | None = None,
                       options: TranslateOptions | None = None, progress: ProgressTarget = None,
                       log: OutputLog | None = None, **option_fields: object) -> DocumentTranslation:
        """Translate a file (DOCX, PPTX, XLSX, EPUB, PO, XLIFF, subtitles, HTML, ...) into the
        same kind of file. `format` names it, else `filename`'s suffix tells it. With `log`,
        engine answers are recorded as they arrive and reused on a later call with the same
        file and options (resume). Blocking: from asyncio use `atranslate_file`."""
        return asyncio.run(self.atranslate_file(data, to, source, format=format, filename=filename,
                                                options=options, progress=progress, log=log, **option_fields))

    async def atranslate_file(self, data: bytes, to: str | Language, source: str | Language | None = "auto", *,
                              format: str | None = None, filename: str | None = None,
                              options: TranslateOptions | None = None, progress: ProgressTarget = None,
                              log: OutputLog | None = None, **option_fields: object) -> DocumentTranslation:
        request = _unfused(self._request(to, source, options, option_fields), "translate a file")
        fmt = document_format(format, filename)
        parsed = await asyncio.to_thread(parse_file, data, fmt, request.options)
        plan = await asyncio.to_thread(self._pipeline.plan, [parsed], request)
        tracker = Progress(progress)
        outcomes = await drive_async(self._pipeline.run(plan, tracker), self._engine, tracker, log)
        return document_translation(outcomes[0], fmt, filename, request.target)

    def detect(self, text: str) -> Detection:
        """The language of `text` (language None and confidence 0 when it has no letters)."""
        return self._detector.detect(check_text(text))

    # -- asyncio API (the server) ----------------------------------------------------------

    async def atranslate(self, text: str, to: str | Language, source: str | Language | None = "auto", *,
                         options: TranslateOptions | None = None, **option_fields: object) -> TranslationResult:
        request = self._request(to, source, options, option_fields)
        return (await self._atranslate([check_text(text)], request))[0]

    async def atranslate_batch(self, texts: list[str], to: str | Language, source: str | Language | None = "auto", *,
                               options: TranslateOptions | None = None,
                               **option_fields: object) -> list[TranslationResult]:
        request = self._request(to, source, options, option_fields)
        return await self._atranslate(_check_texts(texts), request)

    async def astream(self, text: str, to: str | Language, source: str | Language | None = "auto", *,
                      options: TranslateOptions | None = None,
                      **option_fields: object) -> AsyncIterator[str | TranslationResult]:
        """`stream` for the server: the text pieces (str), then, as the last item, the
        TranslationResult of what was streamed (token counts, issues, detection)."""
        request = _unfused(self._request(to, source, options, option_fields), "stream")
        plan = await self._aplan([check_text(text)], request)
        async for item in astream_plan(self._pipeline, plan, self._engine):
            yield item

    async def adetect(self, text: str) -> Detection:
        return await asyncio.to_thread(self.detect, text)

    # -- raw generation (chat passthrough) --------------------------------------------------

    def _raw_request(self, prompt: str | list[int], params: SamplingParams) -> tuple[list[int], SamplingParams]:
        ids = self._model.encode(prompt) if isinstance(prompt, str) else list(prompt)
        if self._answer_cap is not None and params.max_tokens > self._answer_cap:
            params = params.replace(max_tokens=self._answer_cap)
        if not params.ignore_eos:
            params = params.with_stop_ids(self._model.stop_token_ids)
        return ids, params

    async def agenerate(self, prompt: str | list[int], params: SamplingParams) -> Generation:
        """Generate from a rendered model input (special tokens included) or token ids, as
        given: no template, no cleanup, no quality guard. The family's stop ids are added
        unless `params.ignore_eos`; the operator's answer cap applies."""
        ids, params = self._raw_request(prompt, params)
        handle = self._engine.submit(ids, params, stream=False)
        try:
            out = await handle.wait()
        except BaseException:
            handle.cancel()
            raise
        return Generation(self._model.decode(list(out.token_ids)), len(ids), len(out.token_ids),
                          out.finish_reason or "stop", tuple(out.token_ids))

    async def astream_generate(self, prompt: str | list[int],
                               params: SamplingParams) -> AsyncIterator[str | Generation]:
        """`agenerate` in text pieces as tokens arrive, then the Generation. Closing the
        iterator early cancels the engine request."""
        ids, params = self._raw_request(prompt, params)
        handle = self._engine.submit(ids, params)
        decoder = IncrementalDecoder(self._model.decode)
        reason = "stop"
        try:
            async for delta in handle.stream():
                if delta.finished:
                    reason = delta.finish_reason or "stop"
                piece = decoder.push(delta.new_token_ids, final=delta.finished)
                if piece:
                    yield piece
        finally:
            if not handle.done:
                handle.cancel()
        yield Generation(decoder.text, len(ids), len(decoder.ids), reason, tuple(decoder.ids))

    # -- state -----------------------------------------------------------------------------

    @property
    def family(self) -> ModelFamily:
        return self._model.family

    @property
    def checkpoint(self) -> Checkpoint:
        return self._model.checkpoint

    @property
    def cache(self) -> TranslationCache | None:
        return self._cache

    def stats(self) -> EngineStats:
        return self._engine.stats()

    def close(self) -> None:
        """Stop the engine loop and release the device and the cache. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._engine.close()
        if self._cache is not None:
            self._cache.close()

    def __enter__(self) -> Translator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- drivers ---------------------------------------------------------------------------

    def _request(self, to: str | Language, source: str | Language | None, options: TranslateOptions | None,
                 option_fields: dict[str, object]) -> TranslationRequest:
        return resolve_request(self._model.family, to, source, options_with(options, option_fields))

    def _translate(self, texts: list[str], request: TranslationRequest,
                   progress: ProgressTarget) -> list[TranslationResult]:
        if not texts:
            return []
        if request.options.fusion:
            passes = [self._translate(texts, r, None) for r in candidate_requests(request)]
            return [fused_result(self._translate([text], fusion_request(request, c), None)[0], c)
                    for text, c in zip(texts, map(list, zip(*passes)))]
        plan = self._plan(texts, request)
        tracker = Progress(progress)
        outcomes = drive_blocking(self._pipeline.run(plan, tracker), self._engine, tracker)
        return [translation_result(outcome, request) for outcome in outcomes]

    def _plan(self, texts: list[str], request: TranslationRequest) -> Plan:
        return self._pipeline.plan(parse_texts(texts, request.options), request)

    async def _aplan(self, texts: list[str], request: TranslationRequest) -> Plan:
        """`plan` off the event loop, except for short jobs: segmenting and tokenizing a few
        sentences costs less than the hop to a worker thread and back (~0.1 ms of GIL
        hand-offs per request, which a busy server pays on every request). Detection and
        large glossaries always go to a thread."""
        inline = (request.source is not None and len(request.options.glossary) <= INLINE_GLOSSARY_TERMS
                  and sum(len(t) for t in texts) <= INLINE_PLAN_CHARS)
        if inline:
            return self._plan(texts, request)
        return await asyncio.to_thread(self._plan, texts, request)

    async def _atranslate(self, texts: list[str], request: TranslationRequest) -> list[TranslationResult]:
        if not texts:
            return []
        if request.options.fusion:  # the candidate passes run together, then every fusion request
            passes = await asyncio.gather(*(self._atranslate(texts, r) for r in candidate_requests(request)))
            per_text = [list(c) for c in zip(*passes)]
            finals = await asyncio.gather(*(self._atranslate([text], fusion_request(request, c))
                                            for text, c in zip(texts, per_text)))
            return [fused_result(final[0], c) for final, c in zip(finals, per_text)]
        plan = await self._aplan(texts, request)
        outcomes = await drive_async(self._pipeline.run(plan, Progress(None)), self._engine, Progress(None))
        return [translation_result(outcome, request) for outcome in outcomes]


INLINE_PLAN_CHARS = 1000
INLINE_GLOSSARY_TERMS = 64


def _unfused(request: TranslationRequest, what: str) -> TranslationRequest:
    if request.options.fusion:
        raise InvalidInputError(f"fusion runs whole texts through several passes and cannot {what}; "
                                "use translate or translate_batch", field="fusion")
    return request


def check_text(text: object, field: str = "text") -> str:
    if not isinstance(text, str):
        raise InvalidInputError(f"{field} must be a string, got {type(text).__name__}", field=field)
    if not text.strip():
        raise InvalidInputError(f"{field} must not be empty", field=field)
    return text


def _check_texts(texts: object) -> list[str]:
    if isinstance(texts, str) or not isinstance(texts, (list, tuple)):
        raise InvalidInputError("texts must be a list of strings", field="texts")
    return [check_text(t, field=f"texts[{i}]") for i, t in enumerate(texts)]


def _make_engine(engine: str | Engine, checkpoint: Checkpoint, device: str | None, dtype: str | None,
                 config: EngineConfig, options: dict[str, object]) -> tuple[str, Engine]:
    if isinstance(engine, Engine):
        return type(engine).__name__, engine
    if not isinstance(engine, str) or engine not in BACKENDS:
        raise InvalidInputError(
            f"unknown engine {engine!r}; valid engines: {', '.join(BACKENDS)} or an Engine instance",
            field="engine",
        )
    from hymt.engine.factory import create_engine

    return engine, create_engine(engine, checkpoint, device=device, dtype=dtype, config=config, **options)


def _device_of(engine: Engine, requested: str | None) -> str:
    return engine.device_name() or requested or "cpu"


def _open_cache(cache: object) -> TranslationCache | None:
    if cache is False or cache is None:
        return None
    if cache is True:
        try:
            return TranslationCache()
        except InvalidInputError as exc:  # an unwritable home must not stop translation
            logger.warning("translation cache disabled: %s", exc)
            return None
    if isinstance(cache, (str, Path)):
        return TranslationCache(cache)
    raise InvalidInputError(f"cache must be True, False or a file path, got {cache!r}", field="cache")
