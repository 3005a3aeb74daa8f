"""ServerSettings: everything `hymt serve` is configured with, validated once."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from hymt.engine.backend_names import BACKENDS
from hymt.errors import InvalidInputError
from hymt.families import DEFAULT_MODEL
from hymt.server.glossary_store import GlossarySettings

LOG_LEVEL_CHOICES = ("critical", "error", "warning", "info", "debug")


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
        gpu_memory_gb / quantization / kv_cache_dtype / device: passed to the engine.
        engine_process: run a local engine (native, transformers) in a child process of its
            own (`hymt.engine.engine_process`); False runs it in the server process.
        max_queue: requests admitted at once (running or waiting in the engine); one more
            gets 429 with Retry-After instead of an unbounded queue.
        max_chars: most characters in one request, all items together (413 above).
        max_batch: most items in one request (413 above).
        request_timeout: seconds before a request is cancelled and answered 504.
        cors_origins: allowed browser origins; ("*",) allows any (browser extensions need it).
        cache: use the translation cache by default (a request may still opt out).
        log_level: uvicorn and hymt log level.
        retry_after_s: the Retry-After value sent with 429 and 503.
        warmup: run one tiny translation before reporting ready.
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
    gpu_memory_gb: float | None = None
    quantization: str | None = None
    kv_cache_dtype: str = "auto"
    device: str | None = None
    engine_process: bool = True
    max_queue: int = 256
    max_chars: int = 20000
    max_batch: int = 128
    request_timeout: float = 120.0
    cors_origins: tuple[str, ...] = ("*",)
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
        if not 0 <= self.port <= 65535:
            raise InvalidInputError(f"port must be in 0..65535, got {self.port}", field="port")
        for name in ("max_queue", "max_chars", "max_batch", "retry_after_s"):
            if getattr(self, name) < 1:
                raise InvalidInputError(f"{name} must be >= 1, got {getattr(self, name)}", field=name)
        if self.max_tokens is not None and self.max_tokens < 1:
            raise InvalidInputError(f"max_tokens must be >= 1, got {self.max_tokens}", field="max_tokens")
        if self.request_timeout <= 0:
            raise InvalidInputError(f"request_timeout must be > 0, got {self.request_timeout}", field="request_timeout")
        for name in ("job_ttl_s", "max_jobs", "max_file_mb", "max_segments"):  # document jobs
            if getattr(self, name) <= 0:
                raise InvalidInputError(f"{name} must be > 0, got {getattr(self, name)}", field=name)
        if self.log_level not in LOG_LEVEL_CHOICES:
            raise InvalidInputError(
                f"log_level must be one of {', '.join(LOG_LEVEL_CHOICES)}, got {self.log_level!r}",
                field="log_level",
            )
        keys = tuple(k.strip() for k in self.api_keys if k and k.strip())
        object.__setattr__(self, "api_keys", keys)
        object.__setattr__(self, "cors_origins", tuple(self.cors_origins))

    @cached_property  # read on every response; the folder test is a filesystem call
    def model_id(self) -> str:
        """The id clients see in /v1/models and responses: a hub id, or a local folder's name."""
        if self.served_model_name:
            return self.served_model_name
        path = Path(self.model)
        return path.name if path.exists() else self.model
