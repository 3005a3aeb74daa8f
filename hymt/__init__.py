"""hymt: translation server, CLI and SDK for the Hunyuan translation models.

    from hymt import Translator
    Translator("tencent/HY-MT1.5-1.8B").translate("It's on the house.", to="zh").text

The names below load lazily, so `import hymt` stays light (no torch until a Translator).
"""
from typing import TYPE_CHECKING

__version__ = "0.1.0"

if TYPE_CHECKING:
    from hymt.translate.options import TranslateOptions
    from hymt.translate.result import Detection, Generation, Segment, TranslationResult
    from hymt.translate.sampling_policy import Sampling
    from hymt.translate.translator import Translator, TranslatorInfo

_LAZY = {
    "Translator": "hymt.translate.translator",
    "TranslatorInfo": "hymt.translate.translator",
    "TranslationResult": "hymt.translate.result",
    "Segment": "hymt.translate.result",
    "Detection": "hymt.translate.result",
    "Generation": "hymt.translate.result",
    "TranslateOptions": "hymt.translate.options",
    "Sampling": "hymt.translate.sampling_policy",
}

__all__ = [
    "Detection", "Generation", "Sampling", "Segment", "TranslateOptions", "TranslationResult", "Translator",
    "TranslatorInfo", "__version__",
]


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'hymt' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
