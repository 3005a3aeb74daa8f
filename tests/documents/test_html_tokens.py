"""html_tokens.tokenize: every byte in exactly one token, whatever the markup."""
from __future__ import annotations

import random

import pytest
from format_samples import FUZZ_PIECES, random_document

from hymt.documents.html_tokens import tokenize


def kinds(text: str) -> list[tuple[str, str]]:
    return [(token.kind, text[token.start : token.end]) for token in tokenize(text)]


def covers(text: str) -> bool:
    tokens = tokenize(text)
    return "".join(text[t.start : t.end] for t in tokens) == text and all(
        a.end == b.start for a, b in zip(tokens, tokens[1:])
    )


def test_tokens_carry_names_attributes_and_exact_ranges():
    text = "<!DOCTYPE html><P Class='a > b'>Hi &amp; <b>x</b></>y</P><!-- c --><br/>"
    assert kinds(text) == [
        ("decl", "<!DOCTYPE html>"), ("start", "<P Class='a > b'>"), ("data", "Hi &amp; "), ("start", "<b>"),
        ("data", "x"), ("end", "</b>"), ("other", "</>"), ("data", "y"), ("end", "</P>"),
        ("comment", "<!-- c -->"), ("startend", "<br/>"),
    ]
    start = tokenize(text)[1]
    assert (start.tag, start.attrs) == ("p", (("class", "a > b"),))


@pytest.mark.parametrize(
    "text, last",
    [
        ("<script>if (a<b) x='</p>';", ("other", "if (a<b) x='</p>';")),
        ('<p>x <div class="y', ("other", '<div class="y')),
        ("x < y", ("data", "x < y")),
    ],
)
def test_unfinished_markup_is_kept(text, last):
    assert covers(text)
    assert kinds(text)[-1] == last


def test_random_markup_is_covered_exactly():
    rng = random.Random(5)
    for _ in range(500):
        assert covers(random_document(rng, FUZZ_PIECES).decode())
