"""Glossary matching: word boundaries where words are spaced, case where it matters."""
from __future__ import annotations

import pytest

from hymt.errors import InvalidInputError
from hymt.translate.glossary import GlossaryIndex, matching_terms
from hymt.translate.options import TranslateOptions


def test_glossary_word_boundaries():
    terms = (("cat", "Katze"), ("New York", "Neu York"), ("人工智能", "AI"))
    assert matching_terms("The cat sleeps.", terms) == (("cat", "Katze"),)
    assert matching_terms("Concatenate strings.", terms) == ()
    assert matching_terms("I love new york!", terms) == (("New York", "Neu York"),)
    assert matching_terms("我们研究人工智能技术。", terms) == (("人工智能", "AI"),)
    with pytest.raises(InvalidInputError):
        TranslateOptions(glossary=[("cat",)])


@pytest.mark.parametrize("text", ["Let us go.", "It is late.", "J'ai faim.", "Said to me: it works."])
def test_all_caps_and_two_letter_terms_match_their_case_only(text):
    terms = (("US", "USA"), ("IT", "IT"), ("AI", "KI"), ("me", "mich"))
    assert matching_terms(text, terms) == ((("me", "mich"),) if " me" in text else ())


def test_all_caps_terms_match_as_written():
    terms = (("US", "USA"), ("IT", "IT"), ("AI", "KI"), ("NASA", "NASA"))
    assert matching_terms("The US, IT and AI teams met NASA.", terms) == terms
    assert matching_terms("Nasa is not NASA-shaped.", (("NASA", "NASA"),)) == (("NASA", "NASA"),)
    assert matching_terms("Nasa.", (("NASA", "NASA"),)) == ()


def test_korean_terms_match_inside_words():
    assert matching_terms("서울에서 만나요", (("서울", "Seoul"),)) == (("서울", "Seoul"),)


def test_an_index_serves_many_segments_in_glossary_order():
    index = GlossaryIndex(tuple((f"term{i}", f"T{i}") for i in range(5000)) + (("black cat", "schwarze Katze"),))
    assert index.matches("A black cat met term7 and term4999.") == (
        ("term7", "T7"), ("term4999", "T4999"), ("black cat", "schwarze Katze"))
    assert index.matches("Nothing here.") == ()
