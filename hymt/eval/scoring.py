"""Corpus scores with sacrebleu: BLEU, chrF++ and TER against references, and chrF++ of one
system's outputs against another's (fidelity to the unquantized model, no reference needed).

sacrebleu is imported when a score is computed (it is the `eval` extra). BLEU's tokenizer
follows the target: "zh" for Chinese (zh, zh-Hant, yue), "ja-mecab" for Japanese when its
dictionaries are installed (`pip install "sacrebleu[ja]"`) else "char", "13a" otherwise, as
sacrebleu and WMT do; each score keeps sacrebleu's signature so it can be set beside
published numbers.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING

from hymt.errors import HymtError, InvalidInputError
from hymt.languages import CHINESE_CODES, Language

#: Targets written without spaces between words, where "13a" BLEU counts whole phrases.
UNSPACED_CODES = frozenset({"th", "km", "my", "bo"})
CHRF_WORD_ORDER = 2  # chrF++

if TYPE_CHECKING:
    from sacrebleu.metrics.base import Metric


@dataclass(frozen=True)
class MetricScore:
    """One corpus-level score.

    Attributes:
        metric: "BLEU", "chrF++" or "TER".
        score: the corpus score (0-100; lower is better for TER only).
        signature: sacrebleu's signature (what was computed, with which version).
        detail: sacrebleu's one-line summary (n-gram precisions, brevity penalty, ...).
    """

    metric: str
    score: float
    signature: str
    detail: str

    def to_dict(self) -> dict[str, object]:
        return {"metric": self.metric, "score": round(self.score, 4), "signature": self.signature,
                "detail": self.detail}


@dataclass(frozen=True)
class BleuTokenizer:
    """The tokenizer BLEU uses for a target, and why."""

    name: str
    reason: str


def sacrebleu_module() -> ModuleType:
    """sacrebleu, or an error that says how to install it."""
    try:
        import sacrebleu
    except ImportError:
        raise HymtError('hymt eval needs sacrebleu: pip install "hymt[eval]" (or pip install sacrebleu)') from None
    return sacrebleu


def bleu_tokenizer(target: Language, requested: str | None = None) -> BleuTokenizer:
    """The BLEU tokenizer for `target`: `requested` when given (any sacrebleu tokenizer),
    else the target's usual one (see the module doc).

    Raises:
        InvalidInputError: `requested` is not a sacrebleu tokenizer or cannot run here.
    """
    sacrebleu = sacrebleu_module()
    if requested is not None:
        _check_tokenizer(sacrebleu, requested)
        return BleuTokenizer(requested, "--tokenize")
    if target.code in CHINESE_CODES:
        return BleuTokenizer("zh", "Chinese target")
    if target.code == "ja":
        try:
            sacrebleu.BLEU(tokenize="ja-mecab")
        except (RuntimeError, ImportError):
            return BleuTokenizer("char", 'Japanese target; ja-mecab is not installed (pip install "sacrebleu[ja]")')
        return BleuTokenizer("ja-mecab", "Japanese target")
    if target.code in UNSPACED_CODES:
        return BleuTokenizer("13a", f"default; {target.english_name} has no spaces between words, "
                                    "so --tokenize char or flores200 gives a more meaningful BLEU")
    return BleuTokenizer("13a", "default")


def _check_tokenizer(sacrebleu: ModuleType, name: str) -> None:
    from sacrebleu.metrics.bleu import _TOKENIZERS

    if name not in _TOKENIZERS:
        raise InvalidInputError(f"--tokenize {name!r} is not a sacrebleu tokenizer; valid: {', '.join(_TOKENIZERS)}",
                                field="tokenize")
    try:
        sacrebleu.BLEU(tokenize=name)
    except (RuntimeError, ImportError) as exc:
        raise InvalidInputError(f"--tokenize {name} cannot run here: {str(exc).strip()}", field="tokenize") from None


@dataclass(frozen=True)
class Scorer:
    """Scores outputs of one target language.

    Attributes:
        target: the target language (TER's Asian-script handling follows it).
        tokenizer: BLEU's tokenizer.
        ter: also compute TER.
    """

    target: Language
    tokenizer: BleuTokenizer
    ter: bool = False

    def against_references(self, outputs: Sequence[str], references: Sequence[str]) -> tuple[MetricScore, ...]:
        """BLEU, chrF++ (and TER) of `outputs` against `references`, line by line."""
        sacrebleu = sacrebleu_module()
        metrics = [("BLEU", sacrebleu.BLEU(tokenize=self.tokenizer.name)),
                   ("chrF++", sacrebleu.CHRF(word_order=CHRF_WORD_ORDER))]
        if self.ter:
            asian = self.target.code in CHINESE_CODES or self.target.code == "ja"
            metrics.append(("TER", sacrebleu.TER(asian_support=asian)))
        return tuple(_score(name, metric, outputs, references) for name, metric in metrics)

    def fidelity(self, outputs: Sequence[str], baseline: Sequence[str]) -> MetricScore:
        """chrF++ of `outputs` with `baseline` (another system's outputs) as the reference:
        100 when they are identical."""
        sacrebleu = sacrebleu_module()
        return _score("chrF++", sacrebleu.CHRF(word_order=CHRF_WORD_ORDER), outputs, baseline)


def _score(name: str, metric: Metric, outputs: Sequence[str], references: Sequence[str]) -> MetricScore:
    result = metric.corpus_score(list(outputs), [list(references)])
    signature = str(metric.get_signature())
    return MetricScore(name, float(result.score), signature, result.format(width=2, signature=signature))
