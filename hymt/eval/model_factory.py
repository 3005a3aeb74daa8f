"""The model under evaluation: how to load it, and one Translator per quantization scheme.

`ModelSettings` is everything but the scheme; `open_model(settings, scheme)` builds the
engine and a Translator over it (the engine is built here, not by the Translator, so its
weights figure can be read). A runner takes any `TranslatorFactory`, so tests can hand in
Translators over a scripted engine.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from hymt.bench.quant_compare import UNQUANTIZED
from hymt.engine.backend_names import BACKENDS
from hymt.engine.config import EngineConfig
from hymt.errors import InvalidInputError
from hymt.families import ModelFamily

if TYPE_CHECKING:
    from hymt.translate.translator import Translator

#: The name of the unquantized scheme in reports (the model's own dtype: bf16 on CUDA, float32 on CPU).
REFERENCE_SCHEME = "bf16"


@dataclass(frozen=True)
class ModelSettings:
    """How to load the model (the scheme aside).

    Attributes:
        model: hub id or local checkpoint directory.
        engine: "native", "transformers" or "openai" (then `base_url` is the server).
        family: the official family name; None detects it.
        device / dtype: torch device and weight dtype (None: CUDA + bf16, else CPU + float32).
        gpu_memory_gb: the native engine's memory budget (None: 90 % of the GPU).
        use_cache: read and write the translation cache (off for evaluation by default).
    """

    model: str
    engine: str = "native"
    family: str | None = None
    device: str | None = None
    dtype: str | None = None
    base_url: str | None = None
    gpu_memory_gb: float | None = None
    use_cache: bool = False

    def __post_init__(self) -> None:
        if self.engine not in BACKENDS:
            raise InvalidInputError(f"--engine {self.engine!r}; valid: {', '.join(BACKENDS)}", field="engine")
        if self.engine == "openai" and not self.base_url:
            raise InvalidInputError("--engine openai needs --base-url (the server root)", field="base_url")
        EngineConfig(gpu_memory_gb=self.gpu_memory_gb)  # validates the budget

    def torch_device(self) -> torch.device | None:
        """Where the model runs; None for a remote (openai) engine."""
        if self.engine == "openai":
            return None
        from hymt.engine.devices import resolve_device

        return resolve_device(self.device)

    def dtype_name(self) -> str | None:
        device = self.torch_device()
        if device is None:
            return None
        from hymt.engine.dtypes import resolve_dtype

        return str(resolve_dtype(self.dtype, device)).removeprefix("torch.")

    def fingerprint(self) -> dict[str, object]:
        """What identifies the model's outputs: backend, device, dtype, and the checkpoint
        (a local directory by its weight files' names, sizes and times; a hub id by name)."""
        path = Path(self.model)
        files = sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns)
                       for p in path.glob("*") if p.suffix in (".safetensors", ".json")) if path.is_dir() else []
        return {"model": str(path.resolve()) if path.exists() else self.model, "files": files,
                "engine": self.engine, "base_url": self.base_url, "family": self.family,
                "device": str(self.torch_device()), "dtype": self.dtype_name()}

    def family_of(self) -> ModelFamily:
        """The model's family (from `family`, else detected from the checkpoint)."""
        from hymt.checkpoint import load_checkpoint
        from hymt.families import detect_family, get_family

        return get_family(self.family) if self.family else detect_family(load_checkpoint(self.model))


@dataclass(frozen=True)
class OpenedModel:
    """A Translator for one scheme, and the engine's weights figure when it has one."""

    translator: Translator
    weights_bytes: int | None = None


#: scheme name ("bf16", "int8", ...) -> the model loaded with that scheme.
TranslatorFactory = Callable[[str], OpenedModel]


def quantization_of(scheme: str) -> str | None:
    """The engine's quantization for a scheme name (None for the unquantized reference)."""
    return None if scheme in (REFERENCE_SCHEME, *UNQUANTIZED) else scheme


def check_schemes(settings: ModelSettings, schemes: tuple[str, ...], option: str) -> None:
    """Fail before any model loads when a scheme cannot run: quantization needs the native
    engine, and the device must support the scheme (fp8 needs Hopper-class GPUs).

    Raises:
        InvalidInputError: naming `option` and the schemes this device supports.
    """
    quantized = [s for s in schemes if quantization_of(s) is not None]
    if quantized and settings.engine != "native":
        raise InvalidInputError(f"{option} {','.join(quantized)} needs --engine native (got {settings.engine})",
                                field=option.lstrip("-").replace("-", "_"))
    device = settings.torch_device()
    if device is None:
        return
    from hymt.engine.quant.schemes import resolve_scheme

    for scheme in quantized:
        try:
            resolve_scheme(scheme, device)
        except InvalidInputError as exc:
            raise InvalidInputError(f"{option}: {exc}", field=option.lstrip("-").replace("-", "_")) from None


def default_factory(settings: ModelSettings) -> TranslatorFactory:
    """Opens the model of `settings` with a given scheme (`open_model`)."""
    return lambda scheme: open_model(settings, scheme)


def open_model(settings: ModelSettings, scheme: str) -> OpenedModel:
    """The engine for `scheme` and a Translator over it; the caller closes the Translator
    (which closes the engine)."""
    from hymt.checkpoint import load_checkpoint
    from hymt.engine.factory import create_engine
    from hymt.engine.native_engine import NativeEngine
    from hymt.translate.translator import Translator

    config = EngineConfig(quantization=quantization_of(scheme), gpu_memory_gb=settings.gpu_memory_gb)
    options = {"base_url": settings.base_url} if settings.engine == "openai" else {}
    engine = create_engine(settings.engine, load_checkpoint(settings.model), device=settings.device,
                           dtype=settings.dtype, config=config, **options)
    try:
        translator = Translator(settings.model, engine=engine, family=settings.family, cache=settings.use_cache,
                                engine_config=config)
    except BaseException:
        engine.close()
        raise
    weights = engine.memory_report().weights_bytes if isinstance(engine, NativeEngine) else None
    return OpenedModel(translator, weights)
