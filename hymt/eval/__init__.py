"""`hymt eval`: translation quality on a user's own data (BLEU, chrF++, TER with sacrebleu),
what each quantization scheme costs against the unquantized model, and the Chimera fusion
pipeline against the plain model. docs/EVAL.md describes the command and its output.

Names load on first use, so `hymt --help` (which registers `hymt eval`) never imports torch.
"""
from __future__ import annotations

import importlib

_HOMES = {
    "Corpus": "hymt.eval.corpus",
    "EvalPlan": "hymt.eval.runner",
    "run_eval": "hymt.eval.runner",
    "EvalReport": "hymt.eval.report",
    "EvalRow": "hymt.eval.report",
    "MetricScore": "hymt.eval.scoring",
    "Scorer": "hymt.eval.scoring",
    "bleu_tokenizer": "hymt.eval.scoring",
    "ModelSettings": "hymt.eval.model_factory",
    "OpenedModel": "hymt.eval.model_factory",
    "TranslatorFactory": "hymt.eval.model_factory",
    "open_model": "hymt.eval.model_factory",
}
__all__ = sorted(_HOMES)


def __getattr__(name: str) -> object:
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'hymt.eval' has no attribute {name!r}")
