"""The parsed subtitle file shared by the three formats: the file's text, where each cue's
text lies in it, and how a translated cue is written back in its place.

Everything outside the cue texts (indices, timings, headers, styles, notes, every field of an
ASS event but its text, line endings, a byte order mark) is copied from the input as it is.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hymt.documents.subtitles.continuation import CueLine, contexts
from hymt.documents.subtitles.cue_markup import CueText
from hymt.documents.subtitles.lines import NEWLINE
from hymt.documents.unit_text import render_string
from hymt.documents.units import Node, ParsedDocument, TagNode, Tree, Unit

#: A line break and the blank (empty or whitespace-only) lines after it.
_BLANK_LINES = re.compile(rf"({NEWLINE})(?:[^\S\r\n]*{NEWLINE})+")
#: Blank lines at the start or end of a text.
_LEADING_BREAKS = re.compile(rf"\A(?:[^\S\r\n]*{NEWLINE})+")
_TRAILING_BREAKS = re.compile(rf"(?:{NEWLINE}[^\S\r\n]*)+\Z")
_BREAKS = re.compile(rf"{NEWLINE}(?:[^\S\r\n]*{NEWLINE})*")


def fold_blank_lines(text: str) -> str:
    """`text` without a blank line, at its edges or inside: in SRT and WebVTT a blank line
    ends the cue, so a translation must never write one. Each run of blank lines becomes
    the single line break before it. A cue's own text never has one, so it keeps its bytes."""
    return _TRAILING_BREAKS.sub("", _LEADING_BREAKS.sub("", _BLANK_LINES.sub(r"\1", text)))


def replace_line_breaks(text: str, replacement: str) -> str:
    """Every run of line breaks (blank lines included) in `text` as one `replacement`."""
    return _BREAKS.sub(lambda _: replacement, text)


def _trim_edges(tree: Tree) -> Tree:
    """The tree without line breaks before its first or after its last text (past void tags,
    inside a pair): a cue never starts or ends with an empty line of the model's making."""
    return _trim(_trim(tree, _LEADING_BREAKS, forward=True), _TRAILING_BREAKS, forward=False)


def _trim(tree: Tree, pattern: re.Pattern[str], *, forward: bool) -> Tree:
    nodes: list[Node] = list(tree)
    for index in range(len(nodes)) if forward else range(len(nodes) - 1, -1, -1):
        node = nodes[index]
        if isinstance(node, str):
            nodes[index] = pattern.sub("", node)
        elif node.void:
            continue
        else:
            nodes[index] = TagNode(node.number, _trim(node.children, pattern, forward=forward))
        break
    return tuple(node for node in nodes if node != "")


@dataclass(frozen=True)
class Cue:
    """A cue's text in the file: characters `start` to `end` of the decoded file, read as
    `text`; `escape` writes translated text for where it goes (line endings, entities);
    `key` groups the cues whose sentences may continue one another (continuation.py)."""

    start: int
    end: int
    text: CueText
    escape: Callable[[str], str]
    where: str
    key: str = ""


class CueDocument(ParsedDocument):
    """A subtitle file of `text` with its translatable `cues` in file order; `finish`, when
    given, applies the format's last rule to each rendered cue text."""

    def __init__(self, text: str, cues: Sequence[Cue], finish: Callable[[str], str] | None = None) -> None:
        self._text = text
        self._cues = tuple(cues)
        self._finish = finish
        lines = [CueLine(cue.text.plain, cue.key) for cue in self._cues]
        self._units = tuple(
            Unit(cue.text.text, split=False, context=context, where=cue.where)
            for cue, context in zip(self._cues, contexts(lines))
        )

    @property
    def units(self) -> tuple[Unit, ...]:
        return self._units

    def render(self, translations: Sequence[Tree]) -> bytes:
        if len(translations) != len(self._cues):
            raise ValueError(f"{len(translations)} translations for {len(self._cues)} cues")
        parts: list[str] = []
        position = 0
        for cue, tree in zip(self._cues, translations):
            parts.append(self._text[position : cue.start])
            rendered = render_string(_trim_edges(tree), cue.text.markup, cue.escape)
            parts.append(self._finish(rendered) if self._finish else rendered)
            position = cue.end
        parts.append(self._text[position:])
        return "".join(parts).encode("utf-8")

