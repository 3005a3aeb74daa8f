"""TranslationJob: what every protocol handler asks the model service to translate."""
from __future__ import annotations

from dataclasses import dataclass, field

from hymt.languages import Language
from hymt.translate.options import TranslateOptions


@dataclass(frozen=True)
class TranslationJob:
    """Texts to translate, their languages, and how (the SDK's one request shape).

    Attributes:
        texts: the items, in order (a single text is a one-item job); blank items come back
            as they are without reaching the engine (clients send empty paragraphs).
        target: the target language.
        source: the source language, or None to detect it per item.
        options: glossary, context, style, template, format, sampling, cache, retry.
    """

    texts: tuple[str, ...]
    target: Language
    source: Language | None = None
    options: TranslateOptions = field(default_factory=TranslateOptions)

    @property
    def chars(self) -> int:
        return sum(len(t) for t in self.texts)
