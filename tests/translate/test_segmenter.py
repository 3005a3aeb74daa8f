"""split_sentences / split_to_budget directly, and a randomized round-trip check of every format."""
from __future__ import annotations

import random

import pytest

from hymt.translate import reassemble, segment_document
from hymt.translate.segmenter import split_sentences, split_to_budget


def _join(pairs):
    return "".join(p + s for p, s in pairs)


def test_sentences_and_separators():
    text = "Hello world! How are you?  I am fine.\nThanks."
    pairs = split_sentences(text)
    assert pairs == [("Hello world!", " "), ("How are you?", "  "), ("I am fine.", "\n"), ("Thanks.", "")]


@pytest.mark.parametrize("text", [
    "Prof. Dr. Müller kommt z.B. am Montag.",
    "The value is 3.14159 and e.g. more.",
    "See Fig. 3 for details.",
    "He said \"Stop.\" and left.",
    "Wait... what happened?",
])
def test_no_split(text):
    assert split_sentences(text) == [(text, "")]


def test_quotes_after_end_punctuation_stay():
    assert split_sentences('He said "Go!" Then he left.') == [('He said "Go!"', " "), ("Then he left.", "")]
    assert split_sentences("他说：“走吧。”然后离开了。") == [("他说：“走吧。”然后离开了。", "")]
    assert split_sentences("真的吗？」我们走吧。") == [("真的吗？」我们走吧。", "")]
    assert split_sentences("真的吗？」 我们走吧。") == [("真的吗？」", " "), ("我们走吧。", "")]


def test_short_fragments_join_the_next_sentence():
    assert split_sentences("A. The first option is good.") == [("A. The first option is good.", "")]


def test_budget_split_prefers_clauses_then_spaces():
    text = "one two three, four five six, seven eight nine"
    pieces = split_to_budget(text, 6, count=lambda s: len(s.split()) * 2)
    assert _join(pieces) == text
    assert pieces[0] == ("one two three,", " ")
    words = "alpha beta gamma delta epsilon zeta eta theta"
    pieces = split_to_budget(words, 3, count=lambda s: len(s.split()))
    assert _join(pieces) == words and all(len(p.split()) <= 3 for p, _ in pieces)


_ALPHABET = list("abc XYZ.,!?;:\n\n\t  -#*>|`~<>/=\"'()1234") + list("。！？「」“”，中文字ไทย។။") + ["```", "\n\n", " --> ", "<b>", "</p>", "&amp;", "\r\n"]


@pytest.mark.parametrize("fmt", ["text", "markdown", "srt", "html"])
def test_random_documents_roundtrip(fmt):
    rng = random.Random(fmt)
    for _ in range(300):
        text = "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(1, 80)))
        segments = segment_document(text, fmt, max_tokens=8)
        assert reassemble(segments) == text, repr(text)
        assert all(s.source == "" or s.source.strip() for s in segments)
