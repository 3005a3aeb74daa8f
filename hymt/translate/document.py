"""A document as segments: `segment_document` splits, `reassemble` joins.

Invariant: `"".join(s.source + s.separator_after for s in segment_document(text, ...)) == text`
for every input and format. Leading markup (a heading marker on the first line, an SRT index,
a doctype) sits in the separator of an empty, non-translatable lead segment, so the first
translatable segment never starts with markup.

Choice: sentences stay separate segments (one sentence per request; docs/reference/protocols.md
§9.2 reports dropped sentences when many are packed in one prompt). Only fragments with fewer than
three letters join the following sentence.
"""
from __future__ import annotations

import re

from hymt.errors import InvalidInputError
from hymt.translate.formats import FORMATS, PARSERS, Run
from hymt.translate.result import Segment
from hymt.translate.segmenter import TokenCounter, approx_tokens, split_sentences, split_to_budget

#: Default token budget of one segment (community servers found <150-250 tokens reliable).
DEFAULT_MAX_SEGMENT_TOKENS = 200

_NOT_WORDS = re.compile(
    r"https?://\S+|www\.\S+|[\w.+-]+@[\w-]+\.[\w.]+|`[^`]*`|&#?\w+;|\{\{[^}]*\}\}|\$\{[^}]*\}|%[sd]",
)


def is_translatable(text: str) -> bool:
    """True when `text` has letters outside URLs, e-mail addresses, inline code, entities
    and placeholders: numbers, symbols, emoji and code pass through without the model."""
    stripped = _NOT_WORDS.sub("", text)
    return any(ch.isalpha() for ch in stripped)


def check_format(format: str) -> str:
    if not isinstance(format, str) or format.lower() not in FORMATS:
        raise InvalidInputError(
            f"unknown format {format!r}; valid formats: {', '.join(FORMATS)}", field="format"
        )
    return format.lower()


def guess_format(filename: str) -> str:
    """The format for a file name's suffix (.md/.markdown, .srt, .html/.htm; else text)."""
    name = filename.lower()
    if name.endswith((".md", ".markdown", ".mdx")):
        return "markdown"
    if name.endswith(".srt"):
        return "srt"
    if name.endswith((".html", ".htm", ".xhtml")):
        return "html"
    return "text"


class _Builder:
    """Turns runs into segments; markup and boundary whitespace go into separators."""

    def __init__(self, budget: int, count: TokenCounter) -> None:
        self.budget, self.count = budget, count
        self.pieces: list[list[str]] = []  # [source, separator_after]
        self.lead = ""

    def markup(self, text: str) -> None:
        if self.pieces:
            self.pieces[-1][1] += text
        else:
            self.lead += text

    def text(self, run: Run) -> None:
        core = run.text.strip()
        if not core:
            self.markup(run.text)
            return
        start = len(run.text) - len(run.text.lstrip())
        self.markup(run.text[:start])
        sentences = split_sentences(core) if run.sentences else [(core, "")]
        for sentence, sep in sentences:
            for chunk, chunk_sep in split_to_budget(sentence, self.budget, self.count):
                self.pieces.append([chunk, ""])
                self.markup(chunk_sep)
            self.markup(sep)
        self.markup(run.text[start + len(core) :])

    def segments(self) -> list[Segment]:
        result = []
        if self.lead or not self.pieces:
            result.append(Segment(source="", text="", separator_after=self.lead, translatable=False))
        for source, sep in self.pieces:
            result.append(
                Segment(source=source, text=source, separator_after=sep, translatable=is_translatable(source))
            )
        return result


def segment_document(
    text: str,
    format: str = "text",
    *,
    max_tokens: int = DEFAULT_MAX_SEGMENT_TOKENS,
    count_tokens: TokenCounter | None = None,
) -> list[Segment]:
    """Split `text` into segments (paragraphs -> sentences -> token-budget chunks).

    Args:
        text: the document.
        format: "text", "markdown", "html" or "srt" (what counts as markup).
        max_tokens: the most tokens one segment may have (by `count_tokens`).
        count_tokens: a token counter (the model tokenizer's); defaults to an estimate.

    Returns:
        Segments whose `text` equals their `source`; `reassemble` of them gives `text` back.
    """
    if not isinstance(text, str):
        raise InvalidInputError(f"text must be a string, got {type(text).__name__}", field="text")
    if max_tokens < 8:
        raise InvalidInputError(f"max_tokens must be >= 8, got {max_tokens}", field="max_tokens")
    builder = _Builder(max_tokens, count_tokens or approx_tokens)
    for run in PARSERS[check_format(format)](text):
        if run.markup:
            builder.markup(run.text)
        else:
            builder.text(run)
    return builder.segments()


def whole_text_segments(text: str) -> list[Segment]:
    """`text` as one segment (templates that read a whole text at once); surrounding
    whitespace goes into the separators, as `segment_document` does."""
    core = text.strip()
    start = text.index(core[0]) if core else len(text)
    lead = Segment(source="", text="", separator_after=text[:start], translatable=False)
    body = Segment(source=core, text=core, separator_after=text[start + len(core):])
    return [lead, body] if start else [body]


def reassemble(segments: list[Segment] | tuple[Segment, ...]) -> str:
    """The translated document: each segment's `text` followed by its separator."""
    return "".join(s.text + s.separator_after for s in segments)
