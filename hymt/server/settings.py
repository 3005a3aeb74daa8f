"""ServerSettings: everything `hymt serve` is configured with, validated once."""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from hymt.engine.backend_names import BACKENDS
from hymt.engine.config import EngineConfig, check_backend_config
from hymt.errors import InvalidInputError
from hymt.families import DEFAULT_MODEL
from hymt.server.glossary_store import GlossarySettings
from hymt.server.origins import DEFAULT_CORS_ORIGINS, check_patterns

LOG_LEVEL_CHOICES = ("critical", "error", "warning", "info", "debug")
MIB = 1024 * 1024


@dataclass(frozen=True)
class ServerSettings:
    """Configuration of one server process (one model, one engine, many protocols).

    Attributes:
        model: hub id or local checkpoint directory.
        family: official family name when detection from the checkpoint is not wanted.
        engine: token engine backend: "native", "transformers" or "openai".
        openai_base_url: the remote OpenAI-compatible server when engine is "openai".
        host / port: where uvicorn listens (loopback by default: nothing is exposed unasked).
        api_keys: accepted keys; empty means no authentication (the localhost default).
        device: the torch device of a local engine (None: CUDA when present, else CPU).
        engine_config: the native engine's memory budget, quantization, KV cache dtype, prefix
            cache and step sizes (other engines ignore it).
        engine_process: run a local engine (native, transformers) in a child process of its
            own (`hymt.engine.engine_process`); False runs it in the server process.
        max_queue: texts admitted at once, over all requests (running or waiting in the
            engine): a request of k texts takes k places. Past it, 429 with Retry-After
            instead of an unbounded queue; a request of more than max_queue texts gets 413.
        max_chars: most characters in one request, all items together (413 above).
        max_batch: most items in one request (413 above).
        max_body_bytes: most bytes of one request body, counted before it is read (413).
        max_glossary_terms / max_glossary_bytes: most entries, and most UTF-8 bytes of their
            terms, in the glossary of one request (inline or stored; 413 above).
        request_timeout: seconds before a request is cancelled and answered 504.
        shutdown_timeout: seconds SIGTERM waits for running requests before cutting them
            (None: request_timeout, so that a request that may run is let finish).
        header_timeout: seconds a connection may take to send a request's headers, and may
            stay open before its first request (slow or silent clients are closed).
        body_timeout: seconds a request may take to send its body (408 after).
        keep_alive_timeout: seconds an idle keep-alive connection stays open.
        max_header_bytes: most bytes of one request's headers (431 above).
        max_connections: open connections at once; requests past it get 503.
        engine_restarts: restarts in a row that may fail (the engine cannot be rebuilt, or
            dies again within a minute) before the server gives up and exits non-zero.
        cors_origins: allowed browser origins (hymt.server.origins: exact, host:*, scheme://*
            or *); the default admits loopback pages and browser extensions.
        cache: use the translation cache by default (a request may still opt out).
        log_level: uvicorn and hymt log level.
        retry_after_s: the Retry-After value sent with 429 and 503.
        warmup: run one tiny translation, and build the language detector's models, before
            reporting ready (neither then costs a first request, nor stalls the event loop).
        served_model_name: the model id shown to clients; default derived from `model`.
        max_tokens: the most tokens any one answer may have, whatever the request asks for
            (None: each request's own limit, by default 3 x source tokens + 64 per segment).
        prompt_guard: rewrite generic translation prompts of OpenAI chats into the official
            template, paragraph by paragraph (docs/reference/protocols.md §2.1).
        glossaries: where the DeepL glossaries are kept and how much they may hold
            (hymt/server/glossary_store.py).
        jobs_dir: where document jobs and their files are kept (None: `jobs/` beside the
            translation cache); several server processes may share one.
        job_ttl_s: seconds a finished document job and its files are kept.
        max_jobs: document jobs translated at once by this process (each holds an admission slot).
        max_file_mb: the largest document accepted, in MB (413 above, before it is all read).
        max_segments: the most segments (sentences) one document may have (413 above).
    """

    model: str = DEFAULT_MODEL
    family: str | None = None
    engine: str = "native"
    openai_base_url: str | None = None
    host: str = "127.0.0.1"
    port: int = 8000
    api_keys: tuple[str, ...] = field(default_factory=tuple)
    device: str | None = None
    engine_config: EngineConfig = field(default_factory=EngineConfig)
    engine_process: bool = True
    max_queue: int = 256
    max_chars: int = 20000
    max_batch: int = 128
    max_body_bytes: int = 2 * MIB
    max_glossary_terms: int = 10000
    max_glossary_bytes: int = 1 * MIB
    request_timeout: float = 120.0
    shutdown_timeout: float | None = None
    header_timeout: float = 10.0
    body_timeout: float = 30.0
    keep_alive_timeout: float = 5.0
    max_header_bytes: int = 64 * 1024
    max_connections: int = 1000
    engine_restarts: int = 5
    cors_origins: tuple[str, ...] = DEFAULT_CORS_ORIGINS
    cache: bool = True
    log_level: str = "info"
    retry_after_s: int = 1
    warmup: bool = True
    served_model_name: str | None = None
    max_tokens: int | None = None
    prompt_guard: bool = True
    glossaries: GlossarySettings = field(default_factory=GlossarySettings)
    jobs_dir: str | None = None
    job_ttl_s: float = 86400.0
    max_jobs: int = 2
    max_file_mb: float = 50.0
    max_segments: int = 100_000

    def __post_init__(self) -> None:
        if self.engine not in BACKENDS:
            raise InvalidInputError(
                f"engine must be one of {', '.join(BACKENDS)}, got {self.engine!r}", field="engine"
            )
        if self.engine == "openai" and not self.openai_base_url:
            raise InvalidInputError("engine 'openai' needs --openai-base-url", field="openai_base_url")
        check_backend_config(self.engine, self.engine_config)
        if not 0 <= self.port <= 65535:
            raise InvalidInputError(f"port must be in 0..65535, got {self.port}", field="port")
        for name in ("max_queue", "max_chars", "max_batch", "retry_after_s", "max_body_bytes", "max_glossary_terms",
                     "max_glossary_bytes", "max_header_bytes", "max_connections"):
            if getattr(self, name) < 1:
                raise InvalidInputError(f"{name} must be >= 1, got {getattr(self, name)}", field=name)
        if self.max_tokens is not None and self.max_tokens < 1:
            raise InvalidInputError(f"max_tokens must be >= 1, got {self.max_tokens}", field="max_tokens")
        for name in ("job_ttl_s", "max_jobs", "max_file_mb", "max_segments"):  # document jobs
            if getattr(self, name) <= 0:
                raise InvalidInputError(f"{name} must be > 0, got {getattr(self, name)}", field=name)
        if self.engine_restarts < 0:
            raise InvalidInputError(f"engine_restarts must be >= 0, got {self.engine_restarts}",
                                    field="engine_restarts")
        for name in ("request_timeout", "shutdown_timeout", "header_timeout", "body_timeout", "keep_alive_timeout"):
            value = getattr(self, name)
            if value is None:
                continue
            if not math.isfinite(value) or value <= 0:
                raise InvalidInputError(f"{name} must be a number of seconds > 0, got {value}", field=name)
        if self.log_level not in LOG_LEVEL_CHOICES:
            raise InvalidInputError(
                f"log_level must be one of {', '.join(LOG_LEVEL_CHOICES)}, got {self.log_level!r}",
                field="log_level",
            )
        keys = tuple(k.strip() for k in self.api_keys if k and k.strip())
        object.__setattr__(self, "api_keys", keys)
        object.__setattr__(self, "cors_origins", tuple(self.cors_origins))
        check_patterns(self.cors_origins)

    @property
    def drain_timeout(self) -> float:
        """Seconds SIGTERM lets running requests finish: shutdown_timeout, else request_timeout."""
        return self.shutdown_timeout if self.shutdown_timeout is not None else self.request_timeout

    @property
    def max_file_bytes(self) -> int:
        """max_file_mb in bytes (MiB, as the upload limit counts them)."""
        return int(self.max_file_mb * 1024 * 1024)

    @cached_property  # read on every response; the folder test is a filesystem call
    def model_id(self) -> str:
        """The id clients see in /v1/models and responses: a hub id, or a local folder's name."""
        if self.served_model_name:
            return self.served_model_name
        path = Path(self.model)
        return path.name if path.exists() else self.model


def default_of(name: str) -> object:
    """The default of a ServerSettings field (the CLI's flags show the same values)."""
    found = {f.name: f for f in dataclasses.fields(ServerSettings)}[name]
    if found.default is not dataclasses.MISSING:
        return found.default
    factory = found.default_factory
    assert factory is not dataclasses.MISSING  # every field has a default
    return factory()

