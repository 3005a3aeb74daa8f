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

from hymt.engine.config import EngineConfig
from hymt.engine.interface import Engine, EngineStats
from hymt.errors import InvalidInputError
from hymt.translate.cache import TranslationCache
from hymt.translate.detect import LanguageDetector
from hymt.translate.document import DEFAULT_MAX_SEGMENT_TOKENS
from hymt.translate.options import make_options
from hymt.translate.pipeline import LoadedModel, Pipeline, Progress, Round, check_text
from hymt.translate.result import Detection, TranslationResult
from hymt.translate.streaming import TranslationStream, astream_plan, stream_plan

logger = logging.getLogger(__name__)

ENGINE_BACKENDS = ("native", "transformers", "openai")


@dataclass(frozen=True)
class TranslatorInfo:
    """What a Translator runs: model id or path, family name, engine backend, device."""

    model: str
    family: str
    engine: str
    device: str

    def to_dict(self) -> dict:
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
        engine_options: backend-specific keywords for create_engine (e.g. the openai
            backend's base_url).
    """

    def __init__(
        self,
        model: str | Path = "tencent/HY-MT1.5-1.8B",
        *,
        engine: str | Engine = "native",
        device: str | None = None,
        dtype: str | None = None,
        quantization: str | None = None,
        family: str | None = None,
        cache: bool | str | Path = True,
        engine_config: EngineConfig | None = None,
        max_segment_tokens: int = DEFAULT_MAX_SEGMENT_TOKENS,
        engine_options: dict | None = None,
    ) -> None:
        from hymt.checkpoint import load_checkpoint
        from hymt.engine.async_engine import AsyncEngine
        from hymt.families import detect_family, get_family

        checkpoint = load_checkpoint(model)
        fam = get_family(family) if family else detect_family(checkpoint)
        config = engine_config or EngineConfig()
        if quantization is not None:
            config = dataclasses.replace(config, quantization=quantization)
        model_id = str(Path(model).resolve()) if Path(model).exists() else str(model)
        self._model = LoadedModel(model_id, checkpoint, fam, fam.stop_token_ids(checkpoint), config.max_model_len)
        self._cache = _open_cache(cache)  # before the engine: nothing to release if it fails
        backend, token_engine = _make_engine(engine, checkpoint, device, dtype, config, engine_options or {})
        self._detector = LanguageDetector()
        self._pipeline = Pipeline(
            self._model, cache=self._cache, detector=self._detector, max_segment_tokens=max_segment_tokens
        )
        self._engine = AsyncEngine(token_engine)
        self._closed = False
        self.info = TranslatorInfo(model_id, fam.name, backend, _device_of(token_engine, device))

    # -- blocking API ----------------------------------------------------------------------

    def translate(
        self, text: str, to, source="auto", *, glossary=None, context=None, style=None, template=None,
        format="text", sampling=None, use_cache=True, retry=True,
    ) -> TranslationResult:
        """Translate one text: segmented, every segment in one engine batch, reassembled.

        Args:
            text: the text (must not be blank).
            to / source: language codes, aliases or names; source "auto" detects it.
            glossary: {source term: target term} or (source, target) pairs; segments that
                contain a term use the terminology template.
            context: text the segment follows (context template).
            style: the target style (Hy-MT2 style template).
            template: force a template ("formatted", "delimiters", "structured", ...).
            format: "text", "markdown", "html" or "srt" (what is markup, kept verbatim).
            sampling: None (greedy), "official" (the family's values) or SamplingParams.
            use_cache: read and write the translation cache.
            retry: send a segment the quality guard flags once more (official sampling);
                False makes every segment exactly one engine request (its issues are still
                reported on the result).
        """
        options = dict(glossary=glossary, context=context, style=style, template=template, format=format,
                       sampling=sampling, use_cache=use_cache, retry=retry)
        return self._translate([check_text(text)], to, source, None, options)[0]

    def translate_batch(
        self, texts: list[str], to, source="auto", *, glossary=None, context=None, style=None, template=None,
        format="text", sampling=None, use_cache=True, retry=True,
    ) -> list[TranslationResult]:
        """Translate many texts; all their segments go to the engine at once; input order.
        Arguments as `translate`; the source is detected per text when "auto"."""
        options = dict(glossary=glossary, context=context, style=style, template=template, format=format,
                       sampling=sampling, use_cache=use_cache, retry=retry)
        return self._translate(_check_texts(texts), to, source, None, options)

    def translate_document(
        self, text: str, to, source="auto", *, glossary=None, context=None, style=None, template=None,
        format="text", sampling=None, use_cache=True, retry=True, progress=None,
    ) -> TranslationResult:
        """`translate` reporting progress over segments: `progress` is a callable
        (done, total) or a tqdm-like bar (its total is set, `update(n)` called)."""
        options = dict(glossary=glossary, context=context, style=style, template=template, format=format,
                       sampling=sampling, use_cache=use_cache, retry=retry)
        return self._translate([check_text(text)], to, source, progress, options)[0]

    def stream(
        self, text: str, to, source="auto", *, glossary=None, context=None, style=None, template=None,
        format="text", sampling=None, use_cache=True, retry=True,
    ) -> TranslationStream:
        """The translation in pieces as tokens arrive, segment after segment: iterate the
        returned stream for text (the pieces join to the whole translation, markup and
        whitespace kept); once they are all out, its `result` is the TranslationResult with
        the token counts. Streaming cannot take text back, so the quality guard records
        issues but does not retry here (the counts are those of the one attempt; `retry` is
        accepted, for the same keywords as `translate`, and changes nothing)."""
        options = dict(glossary=glossary, context=context, style=style, template=template, format=format,
                       sampling=sampling, use_cache=use_cache, retry=retry)
        plan = self._plan([check_text(text)], to, source, options)
        return TranslationStream(stream_plan(self._pipeline, plan, self._engine))

    def detect(self, text: str) -> Detection:
        """The language of `text` (language None and confidence 0 when it has no letters)."""
        return self._detector.detect(check_text(text))

    # -- asyncio API (the server) ----------------------------------------------------------

    # Keyword arguments as `translate`.

    async def atranslate(self, text: str, to, source="auto", **kwargs) -> TranslationResult:
        return (await self._atranslate([check_text(text)], to, source, None, kwargs))[0]

    async def atranslate_batch(self, texts: list[str], to, source="auto", **kwargs) -> list[TranslationResult]:
        return await self._atranslate(_check_texts(texts), to, source, None, kwargs)

    async def astream(self, text: str, to, source="auto", **kwargs) -> AsyncIterator[str | TranslationResult]:
        """`stream` for the server: the text pieces (str), then, as the last item, the
        TranslationResult of what was streamed (token counts, issues, detection)."""
        plan = await self._aplan([check_text(text)], to, source, kwargs)
        async for item in astream_plan(self._pipeline, plan, self._engine):
            yield item

    async def adetect(self, text: str) -> Detection:
        return await asyncio.to_thread(self.detect, text)

    # -- state -----------------------------------------------------------------------------

    @property
    def family(self):
        return self._model.family

    @property
    def checkpoint(self):
        return self._model.checkpoint

    @property
    def async_engine(self):
        """The AsyncEngine every call goes through (raw token-level access, e.g. chat)."""
        return self._engine

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

    def __exit__(self, *exc) -> None:
        self.close()

    # -- drivers ---------------------------------------------------------------------------

    def _plan(self, texts, to, source, kwargs):
        options = make_options(self._model.family, to, source, **_known(kwargs))
        return self._pipeline.plan(texts, options)

    def _translate(self, texts, to, source, progress, kwargs) -> list[TranslationResult]:
        if not texts:
            return []
        plan = self._plan(texts, to, source, kwargs)
        tracker = Progress(progress)
        run = self._pipeline.run(plan, tracker)
        try:
            round_ = next(run)
            while True:
                round_ = run.send(self._wait(round_, tracker))
        except StopIteration as done:
            return done.value

    def _wait(self, round_: Round, tracker: Progress) -> list:
        handles = [self._engine.submit(r.prompt_ids, r.params, stream=False) for r in round_.requests]
        try:
            outputs = []
            for handle, weight in zip(handles, round_.weights):
                outputs.append(handle.result())
                tracker.advance(weight)
            return outputs
        except BaseException:
            for handle in handles:
                handle.cancel()
            raise

    async def _aplan(self, texts, to, source, kwargs):
        """`_plan` off the event loop, except for short jobs: segmenting and tokenizing a few
        sentences costs less than the hop to a worker thread and back (~0.1 ms of GIL
        hand-offs per request, which a busy server pays on every request)."""
        if source not in (None, "auto") and sum(len(t) for t in texts) <= INLINE_PLAN_CHARS:
            return self._plan(texts, to, source, kwargs)
        return await asyncio.to_thread(self._plan, texts, to, source, kwargs)

    async def _atranslate(self, texts, to, source, progress, kwargs) -> list[TranslationResult]:
        if not texts:
            return []
        plan = await self._aplan(texts, to, source, kwargs)
        tracker = Progress(progress)
        run = self._pipeline.run(plan, tracker)
        try:
            round_ = next(run)
            while True:
                handles = [self._engine.submit(r.prompt_ids, r.params, stream=False) for r in round_.requests]
                try:
                    outputs = await _wait_all(handles)
                except BaseException:
                    for handle in handles:
                        handle.cancel()
                    raise
                for weight in round_.weights:
                    tracker.advance(weight)
                round_ = run.send(outputs)
        except StopIteration as done:
            return done.value


INLINE_PLAN_CHARS = 1000  # language detection (source "auto") always goes to a thread


async def _wait_all(handles: list) -> list:
    """The handles' final outputs, in order. One handle (the usual server request: a single
    segment) is awaited as is: gather would wrap it in a task of its own."""
    if len(handles) == 1:
        return [await handles[0].wait()]
    return list(await asyncio.gather(*(h.wait() for h in handles)))


_OPTION_NAMES = ("glossary", "context", "style", "template", "format", "sampling", "use_cache", "retry")


def _known(kwargs: dict) -> dict:
    unknown = sorted(set(kwargs) - set(_OPTION_NAMES))
    if unknown:
        raise TypeError(f"unexpected keyword argument(s) {', '.join(unknown)}; valid: {', '.join(_OPTION_NAMES)}")
    return kwargs


def _check_texts(texts) -> list[str]:
    if isinstance(texts, str) or not isinstance(texts, (list, tuple)):
        raise InvalidInputError("texts must be a list of strings", field="texts")
    return [check_text(t, field=f"texts[{i}]") for i, t in enumerate(texts)]


def _make_engine(engine, checkpoint, device, dtype, config, options: dict) -> tuple[str, Engine]:
    if isinstance(engine, Engine):
        return getattr(engine, "backend", type(engine).__name__), engine
    if not isinstance(engine, str) or engine not in ENGINE_BACKENDS:
        raise InvalidInputError(
            f"unknown engine {engine!r}; valid engines: {', '.join(ENGINE_BACKENDS)} or an Engine instance",
            field="engine",
        )
    from hymt.engine.factory import create_engine

    return engine, create_engine(engine, checkpoint, device=device, dtype=dtype, config=config, **options)


def _device_of(engine: Engine, requested: str | None) -> str:
    device = getattr(engine, "device", None)
    return str(device if device is not None else requested or "cpu")


def _open_cache(cache) -> TranslationCache | None:
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
