"""Scorer and BLEU tokenizer choice, checked against sacrebleu called directly."""
from __future__ import annotations

import pytest
import sacrebleu

from hymt.errors import InvalidInputError
from hymt.eval.scoring import Scorer, bleu_tokenizer
from hymt.languages import get_language

HYPS = ["The cat sat on the mat.", "It rains today."]
REFS = ["The cat sat on a mat.", "It is raining today."]


@pytest.mark.parametrize(("target", "expected"), [("zh", "zh"), ("zh-Hant", "zh"), ("yue", "zh"), ("de", "13a"),
                                                  ("th", "13a")])
def test_tokenizer_follows_the_target(target, expected):
    assert bleu_tokenizer(get_language(target)).name == expected


def test_japanese_uses_mecab_when_installed_else_char():
    try:
        sacrebleu.BLEU(tokenize="ja-mecab")
        expected = "ja-mecab"
    except (RuntimeError, ImportError):
        expected = "char"
    chosen = bleu_tokenizer(get_language("ja"))
    assert chosen.name == expected and "Japanese" in chosen.reason


def test_requested_tokenizer_is_checked():
    assert bleu_tokenizer(get_language("th"), "char").name == "char"
    with pytest.raises(InvalidInputError, match="--tokenize 'bogus' is not a sacrebleu tokenizer; valid: .*13a") as err:
        bleu_tokenizer(get_language("en"), "bogus")
    assert err.value.field == "tokenize"


def test_scores_equal_sacrebleu():
    en = get_language("en")
    scores = Scorer(en, bleu_tokenizer(en), ter=True).against_references(HYPS, REFS)
    assert [s.metric for s in scores] == ["BLEU", "chrF++", "TER"]
    assert scores[0].score == pytest.approx(sacrebleu.corpus_bleu(HYPS, [REFS]).score)
    assert scores[1].score == pytest.approx(sacrebleu.corpus_chrf(HYPS, [REFS], word_order=2).score)
    assert scores[2].score == pytest.approx(sacrebleu.corpus_ter(HYPS, [REFS]).score)
    assert scores[0].signature.startswith("nrefs:1|") and "tok:13a" in scores[0].signature
    assert scores[0].detail.startswith("BLEU|nrefs:1")


def test_fidelity_is_chrf_against_the_baseline_outputs():
    en = get_language("en")
    scorer = Scorer(en, bleu_tokenizer(en))
    assert scorer.fidelity(HYPS, HYPS).score == pytest.approx(100.0)
    assert scorer.fidelity(REFS, HYPS).score == pytest.approx(sacrebleu.corpus_chrf(REFS, [HYPS], word_order=2).score)
