"""ModelSupervisor: loads the server's model, watches its engine, and replaces a dead one.

    loading --> ready --(engine process dies)--> restarting --> ready
        \\                                             \\
         failed (load error: `hymt serve` exits 1)      failed (gave up: exits 3)

The model loads in a thread of its own, so the socket opens first. Once it is ready, the
same thread looks at the engine's child process every `WATCH_INTERVAL_S` (and at once when
a request saw an engine error): when the process is gone, the server stops being ready
(/ready 503 with the reason), requests that were using the dead engine end with a retryable
503, and the Translator is rebuilt through the factory after a back-off (0.5 s, doubling up
to 30 s). A restart fails when the factory raises or when the new engine dies again within
`STABLE_AFTER_S`; after `engine_restarts` such failures in a row the supervisor gives up
and sets `gave_up`, on which `hymt serve` exits non-zero so that its own supervisor
(systemd, Kubernetes, Docker) can act.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from hymt.engine.interface import EngineStats
from hymt.errors import HymtError
from hymt.gc_tuning import tune_collector, untune_collector
from hymt.server.errors import public_text
from hymt.server.settings import ServerSettings
from hymt.translate.options import TranslateOptions
from hymt.translate.sampling_policy import Sampling
from hymt.translate.translator import Translator

logger = logging.getLogger(__name__)

#: How often the engine's child process is looked at while serving.
WATCH_INTERVAL_S = 0.25
#: Back-off before restart attempt n (0-based): RESTART_BACKOFF_S * 2**n, at most RESTART_BACKOFF_MAX_S.
RESTART_BACKOFF_S = 0.5
RESTART_BACKOFF_MAX_S = 30.0
#: An engine that dies sooner than this after its restart counts as a failed restart.
STABLE_AFTER_S = 60.0

#: `hymt serve`'s exit status when the model could not be loaded at start.
EXIT_LOAD_FAILED = 1
#: `hymt serve`'s exit status when the engine died and could not be restarted (--engine-restarts).
EXIT_ENGINE_FAILED = 3

Phase = Literal["loading", "ready", "restarting", "failed", "stopped"]
PHASES: tuple[Phase, ...] = ("loading", "ready", "restarting", "failed", "stopped")


@dataclass(frozen=True)
class ServedModel:
    """What a TranslatorFactory builds.

    Attributes:
        translator: the server's one Translator.
        engine_pid: the process id of the Translator's engine while its child process runs,
            None once it has died; None (no callable) when the engine runs in this process,
            where it cannot die on its own.
        engine_stats: the engine's counters where the Translator's are not all of them (an
            engine shared with other processes); None: the Translator's.
    """

    translator: Translator
    engine_pid: Callable[[], int | None] | None = None
    engine_stats: Callable[[], EngineStats] | None = None


TranslatorFactory = Callable[[ServerSettings], "Translator | ServedModel"]


@dataclass(frozen=True)
class EngineEvents:
    """Counters of the engine's life, for /metrics and /api/status."""

    restarts: int = 0  # engines rebuilt after a death
    deaths: int = 0  # engine processes found dead
    failed_restarts: int = 0  # rebuilds that raised
    last_failure: str | None = None  # what happened last (public text)
    last_failure_at: float | None = None  # time.time() of it


class ModelSupervisor:
    """Owns the ServedModel: `start()` loads it; the thread then watches and restarts it."""

    def __init__(self, settings: ServerSettings, factory: TranslatorFactory):
        self.settings = settings
        self._factory = factory
        self.model: ServedModel | None = None
        self.phase: Phase = "loading"
        self.reason: str | None = None  # why not ready: the operator's full text (log, CLI)
        self.public_reason: str | None = None  # the same for clients: no paths, no exception classes
        self.loading_since = time.time()
        self.ready_at: float | None = None
        self.events = EngineEvents()
        self.gave_up = threading.Event()  # set on a failed load, or when restarts are exhausted
        self.exit_status = 0
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._probe = threading.Lock()  # one waitpid at a time: two would race for the exit status
        self._streak = 0  # failed restarts in a row
        self._restarted = False  # the model in service came from a restart
        self._thread: threading.Thread | None = None
        self._gc_threshold: tuple[int, int, int] | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="hymt-model", daemon=True)
        self._thread.start()

    def wait_ready(self, timeout: float) -> bool:
        """Block until the first load has ended (tests, the CLI); True when ready."""
        deadline = time.monotonic() + timeout
        while self.phase == "loading" and time.monotonic() < deadline and not self.gave_up.is_set():
            time.sleep(0.01)
        return self.phase == "ready"

    def hold(self) -> None:
        """No more restarts: the server is shutting down (a dead engine then stays dead)."""
        self._stop.set()
        self._wake.set()

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        model, self.model = self.model, None
        self.phase = "stopped"
        if self._gc_threshold is not None:  # undone before the engine undoes its own tuning
            untune_collector(self._gc_threshold)
            self._gc_threshold = None
        if model is not None:
            model.translator.close()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(5)

    # -- what requests ask -------------------------------------------------------------------
    def serving(self, model: ServedModel) -> bool:
        """True while `model` is the one in service and its engine lives. A request that saw
        an error asks this: False means the engine went away under it (retryable 503); the
        watch thread is woken to act at once."""
        if model is not self.model or self.phase != "ready":
            return False
        if self._alive(model):
            return True
        self._wake.set()
        return False

    def engine_pid(self) -> int | None:
        model = self.model
        if model is None or model.engine_pid is None:
            return None
        with self._probe:
            return model.engine_pid()

    # -- the thread --------------------------------------------------------------------------
    def _run(self) -> None:
        started = time.perf_counter()
        try:
            model = self._build()
        except Exception as exc:  # reported on /ready and to every request
            self._fail_load(exc)
            return
        self._gc_threshold = tune_collector()  # the loaded heap out of the collector's reach
        if not self._install(model):
            return
        logger.info("model ready in %.1f s", time.perf_counter() - started)
        while not self._stop.is_set():
            self._wake.wait(WATCH_INTERVAL_S)
            self._wake.clear()
            serving = self.model
            if self._stop.is_set() or serving is None or self._alive(serving):
                continue
            self._replace(serving)

    def _build(self) -> ServedModel:
        built = self._factory(self.settings)
        model = built if isinstance(built, ServedModel) else ServedModel(built)
        try:
            if self.settings.warmup:
                _warm_up(model.translator)
        except BaseException:
            model.translator.close()
            raise
        return model

    def _install(self, model: ServedModel) -> bool:
        """Put `model` in service; False (and `model` closed) when the server is closing."""
        if self._stop.is_set():
            model.translator.close()
            return False
        self.model = model
        self.reason = self.public_reason = None
        self.ready_at = time.time()
        self.phase = "ready"
        return True

    def _fail_load(self, exc: Exception) -> None:
        if isinstance(exc, HymtError):  # a known failure: its message says it all
            logger.error("model load failed: %s", exc)
        else:
            logger.exception("model load failed")
        self.reason, self.public_reason = _describe(exc)
        self.phase = "failed"
        self.exit_status = EXIT_LOAD_FAILED
        self.gave_up.set()

    def _replace(self, dead: ServedModel) -> None:
        """The engine of `dead` is gone: stop serving it, then rebuild with back-off."""
        lived = time.time() - (self.ready_at or 0.0)
        self._streak = self._streak + 1 if lived < STABLE_AFTER_S and self._restarted else 0
        why = f"the engine process died after {lived:.0f} s of service"
        self.phase, self.model = "restarting", None
        self.reason = self.public_reason = why
        self._record(why, deaths=1)
        logger.error("%s; restarting it", why)
        try:
            dead.translator.close()  # fails whatever still waits on it
        except Exception:
            logger.exception("closing the dead engine's translator failed")
        while not self._stop.is_set():
            if self._streak >= self.settings.engine_restarts:
                self._give_up()
                return
            delay = min(RESTART_BACKOFF_S * 2 ** self._streak, RESTART_BACKOFF_MAX_S)
            if self._stop.wait(delay):
                return
            try:
                model = self._build()
            except Exception as exc:
                self._streak += 1
                full, public = _describe(exc)
                self.reason, self.public_reason = f"{why}; restart failed: {full}", f"{why}; restart failed: {public}"
                self._record(f"engine restart failed: {public}", failed_restarts=1)
                logger.error("engine restart %d failed: %s", self._streak, full)
                continue
            if not self._install(model):
                return
            self._restarted = True
            self.events = _bump(self.events, restarts=1)
            logger.info("engine restarted (%d restarts so far)", self.events.restarts)
            return

    def _give_up(self) -> None:
        self.phase = "failed"
        gave_up = f"gave up after {self._streak} failed restarts in a row (--engine-restarts " \
                  f"{self.settings.engine_restarts})"
        self.reason, self.public_reason = f"{self.reason}; {gave_up}", f"{self.public_reason}; {gave_up}"
        logger.critical("%s", self.reason)
        self.exit_status = EXIT_ENGINE_FAILED
        self.gave_up.set()

    def _record(self, what: str, **counts: int) -> None:
        self.events = _bump(self.events, last_failure=what, last_failure_at=time.time(), **counts)

    def _alive(self, model: ServedModel) -> bool:
        if model.engine_pid is None:
            return True
        with self._probe:
            return model.engine_pid() is not None


def _bump(events: EngineEvents, *, restarts: int = 0, deaths: int = 0, failed_restarts: int = 0,
          last_failure: str | None = None, last_failure_at: float | None = None) -> EngineEvents:
    return EngineEvents(events.restarts + restarts, events.deaths + deaths, events.failed_restarts + failed_restarts,
                        last_failure if last_failure is not None else events.last_failure,
                        last_failure_at if last_failure_at is not None else events.last_failure_at)


def _describe(exc: Exception) -> tuple[str, str]:
    """(the operator's text, the clients' text) of a failed load: hymt's own errors are
    written for users (their paths shortened for clients); anything else is named in the
    log only."""
    if isinstance(exc, HymtError):
        return str(exc), public_text(str(exc))
    return f"{type(exc).__name__}: {exc}", "an unexpected error (the server log has it)"


#: One sentence in each script whose languages the detector tells apart with a model of its own.
DETECTOR_SAMPLES = ("The weather is nice today.", "Сегодня хорошая погода.", "الطقس جميل اليوم.",
                    "आज मौसम अच्छा है।")


def _warm_up(translator: Translator) -> None:
    # The source is named so that warming the engine never depends on the language detector.
    translator.translate("Hello.", to="zh", source="en",
                         options=TranslateOptions(sampling=Sampling(max_tokens=4), use_cache=False))
    # The detector builds its models on first use of a script (seconds, a few hundred MB);
    # the quality check calls it on the event loop, so a first answer in Latin script would
    # stall every client. Built here, in the load thread, before the server reports ready.
    for sample in DETECTOR_SAMPLES:
        translator.detect(sample)
