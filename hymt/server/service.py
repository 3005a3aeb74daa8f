"""ModelService: the server's one Translator and its calls.

The socket opens first; the model loads (and warms up with one tiny translation) in a
thread, so `/health` answers at once and `/ready` turns 200 when the model can serve; a dead
engine is replaced (hymt/server/supervisor.py). Every protocol goes through the methods
here; they raise 503 (with Retry-After) while the model is not ready, turn library errors
into ApiErrors, and answer a retryable 503 when the engine went away under a request. The
Translator is the only engine user: memory does not grow with the number of clients.
"""
from __future__ import annotations

import functools
import logging
import signal
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hymt.engine.interface import EngineStats
from hymt.engine.sampling import SamplingParams
from hymt.server.errors import ApiError, library_errors
from hymt.server.settings import ServerSettings
from hymt.server.supervisor import ModelSupervisor, ServedModel, TranslatorFactory
from hymt.server.translation_job import TranslationJob
from hymt.translate.result import Detection, Generation, TranslationResult
from hymt.translate.translator import Translator

if TYPE_CHECKING:
    from hymt.engine.engine_process import EngineProcess
    from hymt.engine.interface import Engine
    from hymt.engine.process_messages import EngineAddress

logger = logging.getLogger(__name__)

#: Retry-After of a request refused while the engine restarts (a load takes seconds).
RESTART_RETRY_AFTER_S = 5

__all__ = ["ModelService", "ServedModel", "StreamPiece", "TranslatorFactory", "connected_factory", "default_factory"]


@dataclass(frozen=True)
class StreamPiece:
    """One streamed delta, or (with `result` set) the end of the stream."""

    text: str = ""
    result: TranslationResult | None = None


def default_factory(settings: ServerSettings, *, listen: EngineAddress | None = None) -> Translator | ServedModel:
    """Build the real Translator from the settings (with a probe of its engine's child
    process, when it has one). listen: the engine child also accepts EngineClients there
    (the engine's owner under `hymt serve --http-workers`)."""

    if settings.engine == "openai":
        return Translator(settings.model, engine="openai", family=settings.family, cache=settings.cache,
                          max_tokens=settings.max_tokens, engine_options={"base_url": settings.openai_base_url})
    process: EngineProcess | None = None
    if settings.engine_process:
        from hymt.engine.factory import create_process_engine

        process = create_process_engine(settings.engine, settings.model, device=settings.device,
                                        config=settings.engine_config, listen=listen,
                                        child_setup=functools.partial(_prepare_engine_child, settings.log_level))
    engine: str | Engine = process if process is not None else settings.engine
    translator = _translator(settings, engine)
    if process is None:
        return translator
    return ServedModel(translator, engine_pid=lambda: process.pid)


def connected_factory(address: EngineAddress, abandon: Callable[[], str | None]) -> TranslatorFactory:
    """A factory whose Translators run on the engine another process owns at `address`
    (an HTTP worker of `hymt serve --http-workers`): building one connects, waiting while
    the engine loads or restarts; `abandon` says when its owner gave up loading it."""

    def build(settings: ServerSettings) -> ServedModel:
        from hymt.engine.engine_client import EngineClient

        client = EngineClient(address, abandon=abandon)
        return ServedModel(_translator(settings, client), engine_pid=lambda: client.pid,
                           engine_stats=client.fresh_stats)

    return build


def _translator(settings: ServerSettings, engine: str | Engine) -> Translator:
    """The server's Translator over `engine` (a backend name, or an Engine it then owns)."""
    from hymt.engine.interface import Engine

    try:
        return Translator(settings.model, engine=engine, device=settings.device, family=settings.family,
                          cache=settings.cache, engine_config=settings.engine_config, max_tokens=settings.max_tokens)
    except BaseException:
        if isinstance(engine, Engine):
            engine.close()
        raise


def _prepare_engine_child(level: str) -> None:
    """Run first in the engine's child process (EngineSpec.log_setup, the spec's one hook):
    the server's log format and level, and Ctrl-C left to the server. A terminal sends SIGINT
    to the whole process group; the child would die at once, failing the requests the
    server is draining. It ends when the server closes its pipe, or dies."""
    from hymt.server.logging import configure_logging

    configure_logging(level)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class ModelService:
    """The server's model calls, over the ModelSupervisor that loads and restarts the model."""

    def __init__(self, settings: ServerSettings, factory: TranslatorFactory | None = None):
        self.settings = settings
        self.supervisor = ModelSupervisor(settings, factory or default_factory)
        self._known: dict[str, str | None] = {}  # family and device of the last engine seen

    # -- lifecycle (hymt/server/supervisor.py) --------------------------------------------------
    def start(self) -> None:
        self.supervisor.start()

    def wait_ready(self, timeout: float) -> bool:
        """Block until the first load has ended (tests, the CLI); True when ready."""
        return self.supervisor.wait_ready(timeout)

    def close(self) -> None:
        self.supervisor.close()

    @property
    def ready(self) -> bool:
        return self.supervisor.phase == "ready"

    @property
    def phase(self) -> str:
        return self.supervisor.phase

    @property
    def error(self) -> str | None:
        """Why the model does not serve (operator text: the log and the CLI print it whole)."""
        return self.supervisor.reason

    @property
    def public_error(self) -> str | None:
        """`error` as clients may read it (no filesystem paths, no exception classes)."""
        return self.supervisor.public_reason

    @property
    def translator(self) -> Translator | None:
        model = self.supervisor.model
        return model.translator if model is not None else None

    @property
    def ready_at(self) -> float | None:
        return self.supervisor.ready_at

    def require_ready(self) -> Translator:
        """The Translator, or 503 with Retry-After while loading, restarting or failed."""
        return self._require_model().translator

    def _require_model(self) -> ServedModel:
        sup = self.supervisor
        model = sup.model
        if sup.phase == "ready" and model is not None:
            return model
        if sup.phase == "restarting":
            raise self._restarting_error()
        if sup.phase in ("failed", "stopped"):
            raise ApiError(503, f"the model is not available: {self.public_error}", type="not_ready",
                           headers={"Retry-After": "30"})
        waited = time.time() - sup.loading_since
        raise ApiError(503, f"the model is loading ({waited:.0f} s so far); retry shortly", type="not_ready",
                       headers={"Retry-After": str(self.settings.retry_after_s)})

    def _restarting_error(self) -> ApiError:
        return ApiError(503, f"the engine is restarting ({self.public_error or 'its process died'}); retry shortly",
                        type="engine_restarting", headers={"Retry-After": str(RESTART_RETRY_AFTER_S)})

    @contextmanager
    def _calls(self, model: ServedModel, where: str) -> Iterator[None]:
        """Library errors as ApiErrors; any failure of a request whose engine went away under
        it (died, or replaced by a restart) as the retryable 503 instead."""
        try:
            if model is not self.supervisor.model:
                raise self._restarting_error()
            with library_errors(where):
                yield
        except ApiError as err:
            if err.status >= 500 and not self.supervisor.serving(model):
                raise self._restarting_error() from err
            raise
        except Exception as exc:
            if not self.supervisor.serving(model):
                raise self._restarting_error() from exc
            raise

    def check_glossary(self, glossary: tuple[tuple[str, str], ...], field: str = "glossary") -> None:
        """413 over --max-glossary-terms / --max-glossary-bytes."""
        settings = self.settings
        if len(glossary) > settings.max_glossary_terms:
            raise ApiError(413, f"{field} has {len(glossary)} entries; the limit is {settings.max_glossary_terms} "
                           "per request (--max-glossary-terms)", type="too_large", field=field)
        size = sum(len(src.encode()) + len(tgt.encode()) for src, tgt in glossary)
        if size > settings.max_glossary_bytes:
            raise ApiError(413, f"{field} has {size} bytes of terms; the limit is {settings.max_glossary_bytes} "
                           "per request (--max-glossary-bytes)", type="too_large", field=field)

    # -- calls -------------------------------------------------------------------------------
    async def translate(self, job: TranslationJob) -> list[TranslationResult]:
        """A TranslationResult for every item of `job`, in order; blank items come back as they
        are (clients such as Immersive send empty paragraphs) without reaching the engine."""
        self.check_glossary(job.options.glossary)
        model = self._require_model()
        translator = model.translator
        todo = [i for i, text in enumerate(job.texts) if text.strip()]
        results = [TranslationResult(text, job.source, job.target) for text in job.texts]
        source = job.source if job.source is not None else "auto"
        with self._calls(model, "translate"):
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
        self.check_glossary(job.options.glossary)
        model = self._require_model()
        source = job.source if job.source is not None else "auto"
        with self._calls(model, "stream"):
            async for item in model.translator.astream(job.texts[0], job.target, source, options=job.options):
                if isinstance(item, str):
                    yield StreamPiece(text=item)
                else:
                    yield StreamPiece(result=item)

    async def generate(self, prompt: str | list[int], params: SamplingParams) -> Generation:
        """Generate from a rendered prompt (special tokens included) or token ids, as given."""
        model = self._require_model()
        with self._calls(model, "generate"):
            return await model.translator.agenerate(prompt, params)

    async def stream_generate(self, prompt: str | list[int],
                              params: SamplingParams) -> AsyncGenerator[str | Generation, None]:
        """Text deltas of a raw generation, then its Generation. Closing the iterator
        (client gone, timeout) cancels the engine request."""
        model = self._require_model()
        with self._calls(model, "stream_generate"):
            async for item in model.translator.astream_generate(prompt, params):
                yield item

    async def detect(self, text: str) -> Detection:
        model = self._require_model()
        with self._calls(model, "detect"):
            return await model.translator.adetect(text)

    def stats(self) -> EngineStats:
        """The engine's EngineStats (zeros before ready)."""
        model = self.supervisor.model
        if model is None:
            return EngineStats()
        try:
            return model.engine_stats() if model.engine_stats is not None else model.translator.stats()
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
        """Model and engine facts for /ready, /api/status, /api/models (while the engine
        restarts: those of the last one)."""
        translator = self.translator
        if translator is not None:  # the configured model and engine names win
            self._known = {"family": translator.info.family, "device": translator.info.device}
        return {"model": self.settings.model_id, "engine": self.settings.engine,
                "family": self.settings.family, "device": self.settings.device, **self._known}
