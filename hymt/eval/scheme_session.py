"""One scheme's model, opened when the first chunk needs it and closed before the next scheme
loads, so each scheme's memory is measured alone. A run whose chunks all come from the work
file never loads the model.

Opening includes a warm-up call (one sentence, untimed in the pass): one-time costs such as
kernel compilation or loading the language detector would otherwise fall on the first
scheme's first chunk and skew the tokens/s comparison.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import torch

from hymt.eval.memory_probe import MemoryProbe, MemoryUse
from hymt.eval.model_factory import OpenedModel, TranslatorFactory

if TYPE_CHECKING:
    from hymt.translate.translator import Translator


class SchemeSession:
    """The model of one scheme, loaded lazily; `close()` gives its memory and load time."""

    def __init__(self, factory: TranslatorFactory, scheme: str, device: torch.device | None,
                 warmup: Callable[[Translator], object] = lambda translator: None) -> None:
        self.scheme = scheme
        self._factory = factory
        self._warmup = warmup
        self._probe = MemoryProbe(device)
        self._opened: OpenedModel | None = None
        self._load_s: float | None = None
        self._memory: MemoryUse | None = None

    def translator(self) -> Translator:
        """The Translator (loaded and warmed up on the first call)."""
        if self._opened is None:
            self._probe.start()
            t0 = time.perf_counter()
            self._opened = self._factory(self.scheme)
            self._warmup(self._opened.translator)
            self._load_s = time.perf_counter() - t0
            self._probe.sample()
        return self._opened.translator

    def sample_memory(self) -> None:
        """Read memory now (after each chunk)."""
        if self._opened is not None:
            self._probe.sample()

    def close(self) -> tuple[MemoryUse, float | None]:
        """Close the model; (memory used, load + warm-up seconds): memory "not measured" and load None
        when the model never loaded."""
        if self._memory is None:
            if self._opened is None:
                self._memory = MemoryUse("n/a")
            else:
                self._memory = self._probe.finish(self._opened.weights_bytes)
                self._opened.translator.close()
                self._opened = None
        return self._memory, self._load_s

    def __enter__(self) -> SchemeSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
