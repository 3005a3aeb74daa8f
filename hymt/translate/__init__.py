"""The translation pipeline: segment -> prompt -> engine -> clean -> check -> cache -> reassemble.

`Translator` is the entry point; `segment_document` / `reassemble` expose the segmenter on
its own (what is translated, what is kept), `detect_language` the source-language detector.
"""
from hymt.translate.document import guess_format, is_translatable, reassemble, segment_document
from hymt.translate.formats import FORMATS
from hymt.translate.options import TranslateOptions
from hymt.translate.result import Detection, Generation, Segment, TranslationResult
from hymt.translate.sampling_policy import Sampling

__all__ = [
    "FORMATS",
    "Detection",
    "Generation",
    "Sampling",
    "Segment",
    "TranslateOptions",
    "TranslationResult",
    "Translator",
    "TranslatorInfo",
    "detect_language",
    "guess_format",
    "is_translatable",
    "reassemble",
    "segment_document",
]


def __getattr__(name: str):
    # The Translator pulls in the engine stack (torch); import it only when asked for.
    if name in ("Translator", "TranslatorInfo"):
        from hymt.translate import translator

        return getattr(translator, name)
    if name == "detect_language":
        from hymt.translate.detect import detect_language

        return detect_language
    raise AttributeError(f"module 'hymt.translate' has no attribute {name!r}")
