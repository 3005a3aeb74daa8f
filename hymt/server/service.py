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

from hymt.engine.interface import EngineStats
from hymt.engine.sampling import SamplingParams
from hymt.errors import HymtError
from hymt.gc_tuning import tune_collector, untune_collector
from hymt.server.errors import ApiError, library_errors
from hymt.server.settings import ServerSettings
from hymt.server.translation_job import TranslationJob
from hymt.translate.options import TranslateOptions
from hymt.translate.result import Detection, Generation, TranslationResult
from hymt.translate.sampling_policy import Sampling
from hymt.translate.translator import Translator

logger = logging.getLogger(__name__)

TranslatorFactory = Callable[[ServerSettings], Translator]


@dataclass(frozen=True)
class StreamPiece:
    """One streamed delta, or (with `result` set) the end of the stream."""

    text: str = ""
    result: TranslationResult | None = None


def default_factory(settings: ServerSettings) -> Translator:
    """Build the real Translator from the settings."""
    from hymt.engine.config import EngineConfig
    from hymt.engine.interface import Engine

    if settings.engine == "openai":
        return Translator(settings.model, engine="openai", family=settings.family, cache=settings.cache,
                          max_tokens=settings.max_tokens, engine_options={"base_url": settings.openai_base_url})
    config = EngineConfig(
        gpu_memory_gb=settings.gpu_memory_gb,
        quantization=settings.quantization,
        **({"kv_cache_dtype": settings.kv_cache_dtype} if settings.kv_cache_dtype != "auto" else {}),
    )
    engine: str | Engine = settings.engine
    if settings.engine_process:
        from hymt.engine.engine_process import EngineProcess, EngineSpec
        from hymt.server.logging import configure_logging

        engine = EngineProcess(EngineSpec(settings.engine, settings.model, device=settings.device, config=config,
                                          log_setup=functools.partial(configure_logging, settings.log_level)))
    try:
        return Translator(settings.model, engine=engine, device=settings.device, family=settings.family,
                          cache=settings.cache, engine_config=config, max_tokens=settings.max_tokens)
    except BaseException:
        if isinstance(engine, Engine):
            engine.close()
        raise


class ModelService:
    """Owns the Translator; `start()` loads it in a thread."""

    def __init__(self, settings: ServerSettings, factory: TranslatorFactory | None = None):
        self.settings = settings
        self._factory = factory or default_factory
        self.translator: Translator | None = None
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
        except HymtError as exc:  # a known failure: its message says it all
            logger.error("model load failed: %s", exc)
            self.error = str(exc)
            return
        except Exception as exc:  # reported on /ready and to every request
            logger.exception("model load failed")
            self.error = f"{type(exc).__name__}: {exc}"
            return
        self._gc_threshold = tune_collector()  # the loaded heap out of the collector's reach
        self.ready_at = time.time()
        self.ready = True
        logger.info("model ready in %.1f s", time.perf_counter() - started)

    def _warm_up(self, translator: Translator) -> None:
        # The source is named so that warming the engine never depends on the language detector.
        translator.translate("Hello.", to="zh", source="en",
                             options=TranslateOptions(sampling=Sampling(max_tokens=4), use_cache=False))

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
        if translator is not None:
            translator.close()

    def require_ready(self) -> Translator:
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
    async def translate(self, job: TranslationJob) -> list[TranslationResult]:
        """A TranslationResult for every item of `job`, in order; blank items come back as they
        are (clients such as Immersive send empty paragraphs) without reaching the engine."""
        translator = self.require_ready()
        todo = [i for i, text in enumerate(job.texts) if text.strip()]
        results = [TranslationResult(text, job.source, job.target) for text in job.texts]
        source = job.source if job.source is not None else "auto"
        with library_errors():
            if len(todo) == 1:
                results[todo[0]] = await translator.atranslate(job.texts[todo[0]], job.target, source,
                                                               options=job.options)
            elif todo:
                done = await translator.atranslate_batch([job.texts[i] for i in todo], job.target, source,
                                                         options=job.options)
                for i, result in zip(todo, done):
                    results[i] = result
        return results

    async def stream(self, job: TranslationJob) -> AsyncIterator[StreamPiece]:
        """Deltas of one text's translation, then a piece carrying its result."""
        translator = self.require_ready()
        source = job.source if job.source is not None else "auto"
        with library_errors():
            async for item in translator.astream(job.texts[0], job.target, source, options=job.options):
                if isinstance(item, str):
                    yield StreamPiece(text=item)
                else:
                    yield StreamPiece(result=item)

    async def generate(self, prompt: str | list[int], params: SamplingParams) -> Generation:
        """Generate from a rendered prompt (special tokens included) or token ids, as given."""
        translator = self.require_ready()
        with library_errors():
            return await translator.agenerate(prompt, params)

    async def stream_generate(self, prompt: str | list[int], params: SamplingParams) -> AsyncIterator[str | Generation]:
        """Text deltas of a raw generation, then its Generation. Closing the iterator
        (client gone, timeout) cancels the engine request."""
        translator = self.require_ready()
        with library_errors():
            async for item in translator.astream_generate(prompt, params):
                yield item

    async def detect(self, text: str) -> Detection:
        translator = self.require_ready()
        with library_errors():
            return await translator.adetect(text)

    def stats(self) -> EngineStats:
        """The engine's EngineStats (zeros before ready)."""
        translator = self.translator
        if translator is None:
            return EngineStats()
        try:
            return translator.stats()
        except Exception:  # stats must never break /metrics
            logger.debug("stats() failed", exc_info=True)
            return EngineStats()

    def model_aliases(self) -> list[str]:
        """Other names clients may call the served model by: the family's name and hub id."""
        if self.translator is None:
            return []
        family = self.translator.family
        return [family.name, family.hub_id]

    def info(self) -> dict[str, str | None]:
        """Model and engine facts for /ready, /api/status, /api/models."""
        info: dict[str, str | None] = {"model": self.settings.model_id, "engine": self.settings.engine,
                                       "family": self.settings.family, "device": self.settings.device}
        if self.translator is not None:  # the configured model and engine names win
            info.update(family=self.translator.info.family, device=self.translator.info.device)
        return info
