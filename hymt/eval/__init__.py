"""`hymt eval`: translation quality on a user's own data (BLEU, chrF++, TER with sacrebleu),
what each quantization scheme costs against the unquantized model, and the Chimera fusion
pipeline against the plain model. docs/EVAL.md describes the command and its output."""
from hymt.eval.corpus import Corpus
from hymt.eval.model_factory import ModelSettings, OpenedModel, TranslatorFactory, open_model
from hymt.eval.report import EvalReport, EvalRow
from hymt.eval.runner import EvalPlan, run_eval
from hymt.eval.scoring import MetricScore, Scorer, bleu_tokenizer

__all__ = [
    "Corpus", "EvalPlan", "EvalReport", "EvalRow", "MetricScore", "ModelSettings", "OpenedModel", "Scorer",
    "TranslatorFactory", "bleu_tokenizer", "open_model", "run_eval",
]
