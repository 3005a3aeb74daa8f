"""Aligning a Markdown block's inline content with its source lines."""
from __future__ import annotations

import pytest

from hymt.documents.document_builder import DocumentBuilder
from hymt.documents.markdown import escape_markdown, parser
from hymt.documents.markdown_inline import InlineReader, Misaligned, SourceLine, align_line, content_offsets


def test_a_content_line_is_the_end_of_its_source_line():
    assert align_line("text", "> - text", 8, table=False) == [4, 5, 6, 7, 8]
    assert align_line("text", "> - tex", 7, table=False) is None


def test_a_table_cell_pipe_matches_its_escape():
    source = "| a \\| b |"
    assert align_line("a | b", source, 8, table=True) == [2, 3, 4, 6, 7, 8]
    assert align_line("a | b", source, 8, table=False) is None


def test_leading_spaces_may_come_from_a_tab():
    assert align_line("  x", "\tx", 2, table=False) == [1, 1, 1, 2]


def test_content_offsets_span_line_endings_and_prefixes():
    text = "> one\n> two  \n"
    lines = [SourceLine(0, 5), SourceLine(6, 13)]
    offsets = content_offsets("one\ntwo", text, lines, lambda line, last: [len(line.rstrip())], table=False)
    assert offsets == [2, 3, 4, 5, 8, 9, 10, 11]
    assert text[offsets[3] : offsets[4]] == "\n> "
    with pytest.raises(Misaligned):
        content_offsets("one\nsix", text, lines, lambda line, last: [len(line.rstrip())], table=False)


def test_tokens_that_do_not_match_their_source_are_refused():
    text = "a *b* c"
    tokens = parser().parseInline(text)[0].children or []
    offsets = list(range(len(text) + 1))
    reader = InlineReader(parser(), {}, DocumentBuilder(text), text, text, offsets, escape_markdown)
    assert [type(piece).__name__ for piece in reader.read(tokens, task_item=False).pieces] == [
        "Text", "Open", "Text", "Close", "Text"
    ]
    other = "a _b_ c"
    reader = InlineReader(parser(), {}, DocumentBuilder(other), other, other, offsets, escape_markdown)
    with pytest.raises(Misaligned):
        reader.read(tokens, task_item=False)
