"""The translation pipeline: parse -> segment -> prompt -> engine -> clean -> check -> cache -> render.

`Translator` is the entry point; `detect_language` the source-language detector. The formats
a text or file may be in are hymt.documents' (text_format_names() for texts).
"""
from typing import TYPE_CHECKING

from hymt.translate.options import TranslateOptions
from hymt.translate.result import Detection, Generation, Segment, TranslationResult
from hymt.translate.sampling_policy import Sampling
from hymt.translate.text_formats import text_format_names

if TYPE_CHECKING:  # imported when first used (the engine stack: torch)
    from hymt.translate.detect import detect_language
    from hymt.translate.translator import Translator, TranslatorInfo

__all__ = [
    "text_format_names",
    "Detection",
    "Generation",
    "Sampling",
    "Segment",
    "TranslateOptions",
    "TranslationResult",
    "Translator",
    "TranslatorInfo",
    "detect_language",
]


def __getattr__(name: str) -> object:
    # The Translator pulls in the engine stack (torch); import it only when asked for.
    if name in ("Translator", "TranslatorInfo"):
        from hymt.translate import translator

        return getattr(translator, name)
    if name == "detect_language":
        from hymt.translate.detect import detect_language

        return detect_language
    raise AttributeError(f"module 'hymt.translate' has no attribute {name!r}")
