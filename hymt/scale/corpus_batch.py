"""One batch of corpus rows through a Translator: what the local loop and each Ray Data actor run.

Both paths call `translate_rows` on the same batches, so their outputs are the same row for
row. A batch goes to `Translator.translate_batch` (all its segments in one engine batch),
one call per source language when the rows name their own; blank rows stay blank without
reaching the engine.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from hymt.engine.config import EngineConfig
from hymt.scale.corpus_io import CorpusRow, RowTranslation
from hymt.translate.options import TranslateOptions
from hymt.translate.translator import Translator

#: Builds the Translator of one worker (the local loop, or a Ray Data actor): it must pickle
#: to travel to Ray actors.
TranslatorFactory = Callable[[], Translator]
#: The source language every row is read as when it names none: detected per text.
AUTO = "auto"


@dataclass(frozen=True)
class CorpusRequest:
    """What to translate the corpus into, and how. `source` "auto" detects each row's
    language; a row's own source (a source column) wins over it."""

    target: str
    source: str = AUTO
    options: TranslateOptions = field(default_factory=TranslateOptions)


@dataclass(frozen=True)
class TranslatorSpec:
    """A picklable recipe for the Translator (Translator's arguments): each worker builds its own.

    Attributes:
        engine_options: backend keywords as (name, value) pairs (the openai backend's base_url).
        engine_config: the native engine's memory budget, quantization and step sizes.
        max_tokens: the most tokens of any one answer (None: each segment's own limit).
    """

    model: str
    engine: str = "native"
    device: str | None = None
    dtype: str | None = None
    family: str | None = None
    cache: bool = True
    engine_config: EngineConfig = field(default_factory=EngineConfig)
    max_tokens: int | None = None
    engine_options: tuple[tuple[str, str], ...] = ()

    def __call__(self) -> Translator:
        return Translator(self.model, engine=self.engine, device=self.device, dtype=self.dtype,
                          family=self.family, cache=self.cache, engine_config=self.engine_config,
                          max_tokens=self.max_tokens,
                          engine_options=dict(self.engine_options) or None)


def translate_rows(translator: Translator, rows: Sequence[CorpusRow], request: CorpusRequest) -> list[RowTranslation]:
    """The translation of every row of `rows`, in order."""
    done: list[RowTranslation | None] = [None] * len(rows)
    groups: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        if row.text.strip():
            groups.setdefault(row.source or request.source, []).append(i)
        else:
            done[i] = RowTranslation(row.text, row.source)
    for source, indices in groups.items():
        results = translator.translate_batch([rows[i].text for i in indices], request.target, source,
                                             options=request.options)
        for i, result in zip(indices, results, strict=True):
            detected = result.source.code if result.source is not None else None
            done[i] = RowTranslation(result.text, detected)
    return [d for d in done if d is not None]
