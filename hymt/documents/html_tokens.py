"""HTML as tokens with exact source ranges, from the standard library's tolerant parser.

`html.parser.HTMLParser` reports what it finds (tags with their decoded attributes, text,
comments, declarations) but not where. It advances through the source only by `updatepos`,
once per construct, right after reporting it, so each reported construct gets the range
consumed next. Bytes it consumes without a report (`</>`), several reports in one range, whatever it leaves
unconsumed at the end (an unclosed `<script>`) and a construct it fails on (then reading
resumes after it) become `other` tokens: together the tokens cover the source exactly,
whatever the markup.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Literal

TokenKind = Literal["start", "startend", "end", "data", "comment", "decl", "pi", "other"]


@dataclass(frozen=True)
class HtmlToken:
    """One construct: `text[start:end]` of the source. `tag` is the lower-case element name
    of a tag, `attrs` its attributes as the parser decoded them."""

    kind: TokenKind
    start: int
    end: int
    tag: str = ""
    attrs: tuple[tuple[str, str | None], ...] = ()


#: What the parser reports as text when a tag or comment it started is never finished.
_BROKEN_MARKUP = re.compile(r"<[A-Za-z/!?]")

_Report = tuple[TokenKind, str, tuple[tuple[str, str | None], ...]]


class _Tokenizer(HTMLParser):
    def __init__(self, start: int) -> None:
        super().__init__(convert_charrefs=True)
        self.tokens: list[HtmlToken] = []
        self._reports: list[_Report] = []
        # Where the next token starts in the whole text (`offset` is the base class's column).
        self.position = start

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._reports.append(("start", tag, tuple(attrs)))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._reports.append(("startend", tag, tuple(attrs)))

    def handle_endtag(self, tag: str) -> None:
        self._reports.append(("end", tag, ()))

    def handle_data(self, data: str) -> None:
        self._reports.append(("data", "", ()))

    def handle_comment(self, data: str) -> None:
        self._reports.append(("comment", "", ()))

    def handle_decl(self, decl: str) -> None:
        self._reports.append(("decl", "", ()))

    def handle_pi(self, data: str) -> None:
        self._reports.append(("pi", "", ()))

    def unknown_decl(self, data: str) -> None:
        self._reports.append(("other", "", ()))

    def updatepos(self, i: int, j: int) -> int:
        if j > i:
            self._consume(j - i)
        return super().updatepos(i, j)

    def _consume(self, length: int) -> None:
        start, self.position = self.position, self.position + length
        if len(self._reports) == 1:
            kind, tag, attrs = self._reports[0]
            self.tokens.append(HtmlToken(kind, start, self.position, tag, attrs))
        else:
            self.tokens.append(HtmlToken("other", start, self.position))
        self._reports.clear()


def tokenize(text: str) -> list[HtmlToken]:
    """Tokens covering `text` exactly and in order; consecutive text is one token, and
    markup the parser gave up on (`<div class="x` at the end) is an `other` token."""
    tokens: list[HtmlToken] = []
    start = 0
    while start < len(text):
        tokenizer = _Tokenizer(start)
        try:
            tokenizer.feed(text[start:])
            tokenizer.close()
        except Exception:  # noqa: BLE001 - the parser's own failure on broken markup
            # Some versions give up on a construct (`<![` without a name, raising an
            # AssertionError): it is kept as markup up to its `>`, and reading resumes after it.
            tokens.extend(tokenizer.tokens)
            close = text.find(">", tokenizer.position)
            start = close + 1 if close >= 0 else len(text)
            tokens.append(HtmlToken("other", tokenizer.position, start))
            continue
        tokens.extend(tokenizer.tokens)
        if tokenizer.position < len(text):
            tokens.append(HtmlToken("other", tokenizer.position, len(text)))
        break
    merged: list[HtmlToken] = []
    for token in tokens:
        if token.kind == "data" and _BROKEN_MARKUP.match(text, token.start):
            token = HtmlToken("other", token.start, token.end)
        elif token.kind == "data" and merged and merged[-1].kind == "other" and merged[-1].end == merged[-1].start + 1:
            # A lone "<" of broken markup: the parser reports it so when a tag runs to the
            # end of the input, and the rest is the tag's text.
            token = HtmlToken("other", merged.pop().start, token.end)
        if token.kind == "data" and merged and merged[-1].kind == "data":
            token = HtmlToken("data", merged.pop().start, token.end)
        merged.append(token)
    return merged
