"""ModelService: the server's one Translator, loaded in the background, and its calls.

The socket opens first; the model loads (and warms up with one tiny translation) in a
thread, so `/health` answers at once and `/ready` turns 200 when the model can serve. Every
protocol goes through the methods here; they raise 503 (with Retry-After) before ready and
turn library errors into ApiErrors. The Translator is the only engine user: memory does not
grow with the number of clients.
"""
from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from hymt.engine.sampling import SamplingParams
from hymt.errors import EngineError, InvalidInputError
from hymt.gc_tuning import tune_collector, untune_collector
from hymt.server.errors import ApiError
from hymt.server.job import DEFAULT_SAMPLING, TranslateJob
from hymt.server.settings import ServerSettings

logger = logging.getLogger(__name__)

TranslatorFactory = Callable[[ServerSettings], Any]


@dataclass(frozen=True)
class ChatOutput:
    """A raw chat generation (OpenAI passthrough): text, token counts, finish reason."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str
    token_ids: tuple[int, ...] = ()


@dataclass(frozen=True)
class StreamPiece:
    """One streamed delta, or (with `result` set) the end of the stream."""

    text: str = ""
    result: Any = None


@dataclass(frozen=True)
class PlainResult:
    """TranslationResult's fields for what the Translator did not report: a blank item passed
    through unchanged, or the end of a stream (the Translator's stream yields text only)."""

    text: str
    source: Any
    target: Any
    segments: tuple = ()
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    elapsed_s: float = 0.0
    cached: bool = False
    retried: bool = False
    issues: tuple = ()
    detection: Any = None


def default_factory(settings: ServerSettings) -> Any:
    """Build the real Translator from the settings (imported here: heavy)."""
    from hymt.engine.config import EngineConfig
    from hymt.translate import Translator

    config_kw: dict[str, Any] = {}
    if settings.gpu_memory_gb is not None:
        config_kw["gpu_memory_gb"] = settings.gpu_memory_gb
    if settings.kv_cache_dtype != "auto":
        config_kw["kv_cache_dtype"] = settings.kv_cache_dtype
    if settings.engine == "openai":
        return Translator(settings.model, engine="openai", family=settings.family, cache=settings.cache,
                          engine_options={"base_url": settings.openai_base_url})
    if settings.quantization is not None:
        config_kw["quantization"] = settings.quantization
    config = EngineConfig(**config_kw)
    engine: Any = settings.engine
    if settings.engine_process:
        from hymt.engine.engine_process import EngineProcess, EngineSpec
        from hymt.server.logging import configure_logging

        engine = EngineProcess(EngineSpec(settings.engine, settings.model, device=settings.device, config=config,
                                          log_setup=functools.partial(configure_logging, settings.log_level)))
    try:
        return Translator(settings.model, engine=engine, device=settings.device, family=settings.family,
                          cache=settings.cache, engine_config=config)
    except BaseException:
        if not isinstance(engine, str):
            engine.close()
        raise


class ModelService:
    """Owns the Translator; `start()` loads it in a thread."""

    def __init__(self, settings: ServerSettings, factory: TranslatorFactory | None = None):
        self.settings = settings
        self._factory = factory or default_factory
        self.translator: Any = None
        self.ready = False
        self.error: str | None = None
        self.loading_since = time.time()
        self.ready_at: float | None = None
        self._thread: threading.Thread | None = None
        self._gc_threshold: tuple[int, int, int] | None = None  # what tune_collector replaced

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._load, name="hymt-model-load", daemon=True)
        self._thread.start()

    def _load(self) -> None:
        started = time.perf_counter()
        try:
            translator = self._factory(self.settings)
            self.translator = translator
            if self.settings.warmup:
                self._warm_up(translator)
        except Exception as exc:  # reported on /ready and to every request
            logger.exception("model load failed")
            self.error = f"{type(exc).__name__}: {exc}"
            return
        self._gc_threshold = tune_collector()  # the loaded heap out of the collector's reach
        self.ready_at = time.time()
        self.ready = True
        logger.info("model ready in %.1f s", time.perf_counter() - started)

    def _warm_up(self, translator: Any) -> None:
        # The source is named so that warming the engine never depends on the language detector.
        translator.translate(
            "Hello.", to="zh", source="en", sampling=SamplingParams(max_tokens=4), use_cache=False
        )

    def wait_ready(self, timeout: float) -> bool:
        """Block until loaded (tests, the CLI); True when ready."""
        if self._thread is not None:
            self._thread.join(timeout)
        return self.ready

    def close(self) -> None:
        translator, self.translator, self.ready = self.translator, None, False
        if self._gc_threshold is not None:  # undone before the engine undoes its own tuning
            untune_collector(self._gc_threshold)
            self._gc_threshold = None
        if translator is not None and hasattr(translator, "close"):
            translator.close()

    def require_ready(self) -> Any:
        """The Translator, or 503 with Retry-After while loading / after a failed load."""
        if self.ready and self.translator is not None:
            return self.translator
        if self.error:
            raise ApiError(503, f"the model failed to load: {self.error}", type="not_ready",
                           headers={"Retry-After": "30"})
        waited = time.time() - self.loading_since
        raise ApiError(503, f"the model is loading ({waited:.0f} s so far); retry shortly", type="not_ready",
                       headers={"Retry-After": str(self.settings.retry_after_s)})

    # -- calls -------------------------------------------------------------------------------
    def _sampling(self, job: TranslateJob) -> SamplingParams | str | None:
        """The job's sampling, with --max-tokens applied when the request set none."""
        cap = self.settings.max_tokens
        if cap is None or isinstance(job.sampling, SamplingParams):
            return job.sampling
        if job.sampling == "official":
            return self.translator.family.default_sampling.replace(max_tokens=cap)
        return DEFAULT_SAMPLING.replace(max_tokens=cap)

    def _kwargs(self, job: TranslateJob) -> dict[str, Any]:
        kw: dict[str, Any] = {"to": job.target, "source": job.source or "auto"}
        optional = {
            "glossary": job.glossary or None, "context": job.context, "style": job.style,
            "template": job.template, "sampling": self._sampling(job),
            "format": None if job.format == "text" else job.format,
            "use_cache": None if job.use_cache else False,
            "retry": None if job.retry else False,
        }
        for name, value in optional.items():
            if value is not None:
                kw[name] = value
        return kw

    async def translate(self, job: TranslateJob) -> list[Any]:
        """TranslationResults for every item of `job`, in order; blank items come back as they
        are (clients such as Immersive send empty paragraphs) without reaching the engine."""
        translator = self.require_ready()
        kwargs = self._kwargs(job)
        todo = [i for i, text in enumerate(job.texts) if text.strip()]
        results: list[Any] = [PlainResult(text, job.source, job.target, prompt_tokens=0, completion_tokens=0)
                              for text in job.texts]
        with _library_errors():
            if len(todo) == 1:
                results[todo[0]] = await translator.atranslate(job.texts[todo[0]], **kwargs)
            elif todo:
                done = await translator.atranslate_batch([job.texts[i] for i in todo], **kwargs)
                for i, result in zip(todo, done):
                    results[i] = result
        return results

    async def stream(self, job: TranslateJob) -> AsyncIterator[StreamPiece]:
        """Deltas of one text's translation, then a piece carrying its result.

        The Translator's astream yields text only; the closing result is then a
        PlainResult (token counts unknown: None) with the detected source language.
        """
        translator = self.require_ready()
        kwargs = self._kwargs(job)
        started = time.perf_counter()
        pieces: list[str] = []
        with _library_errors():
            async for item in translator.astream(job.texts[0], **kwargs):
                if isinstance(item, str):
                    pieces.append(item)
                    yield StreamPiece(text=item)
                elif hasattr(item, "segments") and hasattr(item, "target"):
                    yield StreamPiece(result=item)
                    return
            detection = await translator.adetect(job.texts[0]) if job.source is None else None
        source = detection.language if detection is not None else job.source
        yield StreamPiece(result=PlainResult("".join(pieces), source, job.target,
                                                elapsed_s=time.perf_counter() - started, detection=detection))

    def _chat_request(self, prompt: str | list[int], params: SamplingParams) -> tuple[Any, Any, list[int], Any]:
        translator = self.require_ready()
        checkpoint = translator.checkpoint
        engine = _async_engine(translator)
        ids = checkpoint.encode(prompt) if isinstance(prompt, str) else list(prompt)
        if not params.ignore_eos:
            params = params.with_stop_ids(translator.family.stop_token_ids(checkpoint))
        return checkpoint, engine, ids, params

    async def chat(self, prompt: str | list[int], params: SamplingParams) -> ChatOutput:
        """Generate from a rendered prompt (special tokens included) or token ids, as given."""
        checkpoint, engine, ids, params = self._chat_request(prompt, params)
        handle = engine.submit(ids, params, stream=False)
        try:
            with _library_errors():
                out = await handle.wait()
        except BaseException:
            handle.cancel()
            raise
        return ChatOutput(checkpoint.decode(out.token_ids, skip_special_tokens=True), len(ids),
                          len(out.token_ids), _finish(out.finish_reason), tuple(out.token_ids))

    async def chat_stream(self, prompt: str | list[int], params: SamplingParams) -> AsyncIterator[str | ChatOutput]:
        """Text deltas of a raw chat generation, then its ChatOutput. Closing the iterator
        (client gone, timeout) cancels the engine request."""
        checkpoint, engine, ids, params = self._chat_request(prompt, params)
        handle = engine.submit(ids, params)
        emitted, tokens, reason = "", [], "stop"
        try:
            with _library_errors():
                async for delta in handle.stream():
                    tokens.extend(delta.new_token_ids)
                    text = checkpoint.decode(tokens, skip_special_tokens=True)
                    if delta.finished:
                        reason = _finish(delta.finish_reason)
                    if text.endswith("\ufffd") and not delta.finished:
                        continue  # a character whose bytes are not all there yet
                    if len(text) > len(emitted) and text.startswith(emitted):
                        yield text[len(emitted):]
                        emitted = text
        finally:
            if not handle.done:
                handle.cancel()
        yield ChatOutput(emitted, len(ids), len(tokens), reason, tuple(tokens))

    async def detect(self, text: str) -> Any:
        translator = self.require_ready()
        with _library_errors():
            return await translator.adetect(text)

    def stats(self) -> Any:
        """The engine's EngineStats (zeros before ready)."""
        from hymt.engine.interface import EngineStats

        translator = self.translator
        if translator is None or not hasattr(translator, "stats"):
            return EngineStats()
        try:
            stats = translator.stats()
        except Exception:  # stats must never break /metrics
            logger.debug("stats() failed", exc_info=True)
            return EngineStats()
        return getattr(stats, "engine", stats)

    def info(self) -> dict[str, Any]:
        """Model and engine facts for /ready, /api/status, /api/models."""
        base = {"model": self.settings.model_id, "engine": self.settings.engine, "family": self.settings.family,
                "device": self.settings.device}
        translator = self.translator
        raw = getattr(translator, "info", None) if translator is not None else None
        raw = raw() if callable(raw) else raw
        if raw is not None and not isinstance(raw, dict):
            raw = raw.to_dict() if hasattr(raw, "to_dict") else dict(getattr(raw, "__dict__", {}))
        for key, value in (raw or {}).items():
            if value is not None and key not in ("model", "engine"):  # the configured names win
                base[key] = str(value) if not isinstance(value, (int, float, bool, str, list, dict)) else value
        return base


def _async_engine(translator: Any) -> Any:
    """The Translator's AsyncEngine (raw chat generation needs token-level access)."""
    engine = getattr(translator, "async_engine", None)
    if engine is not None:
        return engine
    raise ApiError(500, "this translator exposes no engine for raw chat generation", type="engine_error")


def _finish(reason: str | None) -> str:
    return "length" if reason == "length" else "stop"


class _library_errors:
    """Turn the library's errors into ApiErrors (400 bad input, 500 engine fault)."""

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        if exc is None or isinstance(exc, ApiError):
            return False
        if isinstance(exc, InvalidInputError):
            raise ApiError.from_input_error(exc) from exc
        if isinstance(exc, EngineError):
            raise ApiError(500, f"engine error: {exc}", type="engine_error") from exc
        return False
