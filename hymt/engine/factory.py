"""create_engine: one entry point for every token-engine backend.

Backends import lazily, so choosing "openai" never imports torch kernels and choosing
"native" never imports httpx.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hymt.engine.backend_names import BACKENDS
from hymt.engine.config import EngineConfig, check_backend_config
from hymt.engine.interface import Engine
from hymt.errors import InvalidInputError

if TYPE_CHECKING:
    import torch

    from hymt.checkpoint import Checkpoint, CheckpointSource
    from hymt.engine.engine_process import EngineProcess
    from hymt.engine.process_messages import EngineAddress

__all__ = ["BACKENDS", "create_engine", "create_process_engine"]


def create_engine(
    backend: str,
    checkpoint: CheckpointSource | dict[str, Any] | None,
    *,
    device: str | torch.device | None = None,
    dtype: str | torch.dtype | None = None,
    config: EngineConfig | None = None,
    **options: Any,
) -> Engine:
    """Build the engine `backend` over `checkpoint`.

    Args:
        backend: one of `hymt.engine.backend_names.BACKENDS`: "native" (hymt's engine),
            "transformers" (HF generate) or "openai" (remote).
        checkpoint: a hymt.checkpoint.Checkpoint, a local dir or a hub id; for "native" also a
            config.json dict (with random_weights=True). For "openai" it serves as the
            tokenizer (and default stop ids) and may be None.
        device / dtype: local backends only; default CUDA + bfloat16, else CPU + float32.
        config: EngineConfig for "native"; other backends refuse one that sets the native
            engine's fields (config.check_backend_config).
        **options: backend-specific keywords: "native" takes random_weights and
            stop_token_ids; "transformers" takes batching, max_batch_size, stop_token_ids;
            "openai" needs base_url and takes model, api_key, prompt_format, max_concurrency, ...
    """
    if config is not None and backend in BACKENDS:
        check_backend_config(backend, config)
    if backend == "native":
        from hymt.engine.native_engine import NativeEngine

        model = checkpoint if isinstance(checkpoint, dict) else _checkpoint(checkpoint)
        return NativeEngine(model, config or EngineConfig(), device=device, dtype=dtype, **options)
    if backend == "transformers":
        from hymt.engine.backends.transformers_engine import TransformersEngine

        return TransformersEngine(_checkpoint(_not_a_config(checkpoint)), device=device, dtype=dtype, **options)
    if backend == "openai":
        from hymt.engine.backends.openai_engine import OpenAIEngine

        base_url = options.pop("base_url", None)
        if not base_url:
            raise InvalidInputError(
                "the openai backend needs base_url (the server root, e.g. http://127.0.0.1:8001)", field="base_url"
            )
        tokenizer = _checkpoint(_not_a_config(checkpoint)) if checkpoint is not None else None
        return OpenAIEngine(base_url, tokenizer=tokenizer, **options)
    raise InvalidInputError(f"unknown engine backend {backend!r}; valid: {', '.join(BACKENDS)}", field="backend")


def create_process_engine(backend: str, model: str, *, device: str | None = None,
                          config: EngineConfig | None = None,
                          child_setup: Callable[[], None] | None = None,
                          listen: EngineAddress | None = None) -> EngineProcess:
    """A local engine ("native" or "transformers") in a child process of its own: only token
    ids cross a pipe, so the caller's threads never compete with it for the GIL.
    `child_setup` runs first in the child (logging, signals); `listen`: where the child also
    accepts EngineClients of other processes."""
    from hymt.engine.engine_process import EngineProcess, EngineSpec

    return EngineProcess(EngineSpec(backend, model, device=device, config=config or EngineConfig(),
                                    log_setup=child_setup), listen=listen)


def _not_a_config(checkpoint: CheckpointSource | dict[str, Any] | None) -> CheckpointSource | None:
    if isinstance(checkpoint, dict):
        raise InvalidInputError("only the native backend builds a model from a config dict (random weights)",
                                field="checkpoint")
    return checkpoint


def _checkpoint(checkpoint: CheckpointSource | None) -> Checkpoint:
    if checkpoint is None:
        raise InvalidInputError("a local engine needs a checkpoint (a directory or a hub id)", field="checkpoint")
    from hymt.checkpoint import load_checkpoint

    return load_checkpoint(checkpoint)
