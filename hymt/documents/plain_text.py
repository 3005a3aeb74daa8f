"""Plain text: hard-wrapped prose joined into paragraphs, lines with meaning kept as lines.

Blank lines separate blocks. Inside a block, a line break is a wrap (the two lines join into
one unit) only when all of these hold, and a line with meaning keeps its own unit otherwise:

- the document is hard-wrapped at a prose width: its wrap width W (the 90th percentile of
  the widths of lines followed by another line) is between 50 and 120 columns;
- the line fills the wrap: at least 3/4 of W, or the next line's first word would not have
  fitted after it;
- the next line does not start a list item (`-`, `*`, `•`, `—`, `1.`, `2)`, `(a)`, ...;
  a block's only marker, when not on its first line, is a wrapped word instead);
- neither line is tabular (a tab or three spaces between words, two or more `|`) or code
  (under 60 % letters; ending in `{` or `}`; starting with `//`, `#!`, `$ `, `>>> `;
  `key = value` or `lower_case_key: value`);
- the next line continues the same indentation and quote prefix (`> `): that of the line
  before, the item's text column after a list marker, or any shallower one after a first
  line indented by at most 10 columns.

So a novel wrapped at 72 columns gives one unit per paragraph, while verse, addresses,
lists and tables keep a unit per line, and code lines are not sent at all. Widths count wide (CJK) characters as two
columns. Joined lines read with a space between them, none between CJK characters, and none
after a hyphen that splits a word. A translated paragraph comes back as one line; a line of
its own comes back as one line in its place. Indentation, quote prefixes, list markers and
trailing spaces stay outside the units.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

from hymt.documents.document_builder import DocumentBuilder, UnitPieces
from hymt.documents.line_breaks import display_width, first_word, join_separator
from hymt.documents.text_document import TextDocument, decode_text
from hymt.documents.units import DocumentFormat

NAME = "text"
#: Wrap widths (columns) at which lines are taken for hard-wrapped prose.
MIN_WRAP_WIDTH, MAX_WRAP_WIDTH = 50, 120
#: A line at least this share of the wrap width fills it.
FILLED_SHARE = 0.75
#: A paragraph's first line may be indented up to this many columns more than the rest
#: (deeper, it is centred or set apart).
MAX_FIRST_LINE_INDENT = 10

_LINE = re.compile(r"([^\r\n]*)(\r\n|\r|\n|$)")
_PREFIX = re.compile(r"(?:[ \t]*>)*[ \t]*")
_MARKER = re.compile(r"(?:[-*+•‣◦▪–—]|\(?(?:\d{1,3}|[a-z])[.)])[ \t]+")
_TABULAR = re.compile(r"\S(?: {3,}|\t+)\S|\|.*\||[\u2500-\u257f]")
_CODE_EDGE = re.compile(r"[{}]$|^(?:[{}]|//|#!|\$ |>>> )")
_SPLIT_WORD = re.compile(r"\w-$")
# `key = value`, `lower_case.key: value`
_ASSIGNMENT = re.compile(r"[\w.\[\]\"'-]+\s*=\s*\S|[a-z_][\w.-]*\s*:\s+\S")


@dataclass(frozen=True)
class _Line:
    start: int
    body: str  # without the line ending
    eol: str
    prefix: str  # indentation and quote markers
    marker: str  # a list marker after the prefix, with its spaces
    content: str  # the rest, without trailing spaces

    @property
    def blank(self) -> bool:
        return not self.body.strip()

    @property
    def code(self) -> bool:
        if _CODE_EDGE.search(self.content) or _ASSIGNMENT.match(self.content):
            return True
        visible = [ch for ch in self.content if not ch.isspace()]
        return sum(ch.isalpha() for ch in visible) < 0.6 * len(visible)

    @property
    def structured(self) -> bool:
        return self.code or _TABULAR.search(self.content) is not None


def _lines(text: str) -> list[_Line]:
    lines: list[_Line] = []
    for match in _LINE.finditer(text):
        if match.start() == len(text) and lines:
            break
        body, eol = match.group(1), match.group(2)
        prefix = _PREFIX.match(body).group(0)  # type: ignore[union-attr]
        marker_match = _MARKER.match(body, len(prefix))
        marker = marker_match.group(0) if marker_match else ""
        content = body[len(prefix) + len(marker) :].rstrip()
        lines.append(_Line(match.start(), body, eol, prefix, marker, content))
        if not eol:
            break
    return lines


def _lone_markers_as_text(lines: list[_Line]) -> list[_Line]:
    """A block's only list marker, on a line other than its first, is a word that wrapped to
    the start of a line ("(1) assert ..." inside a sentence), not a list."""
    out = list(lines)
    block: list[int] = []
    for index in [*range(len(lines)), None]:
        if index is not None and not lines[index].blank:
            block.append(index)
            continue
        marked = [i for i in block if lines[i].marker]
        if len(marked) == 1 and marked[0] != block[0]:
            line = lines[marked[0]]
            out[marked[0]] = replace(line, marker="", content=line.body[len(line.prefix) :].rstrip())
        block = []
    return out


def _wrap_width(lines: list[_Line]) -> int:
    widths = sorted(
        display_width(line.body.rstrip()) for line, after in zip(lines, lines[1:]) if not line.blank and not after.blank
    )
    if not widths:
        return 0
    if len(widths) < 3:
        return widths[-1]
    return widths[math.ceil(0.9 * len(widths)) - 1]


def _continues(first: _Line, before: _Line, after: _Line) -> bool:
    if before is not first:
        return after.prefix == before.prefix
    if before.marker:
        return after.prefix == before.prefix + " " * display_width(before.marker)
    return after.prefix == before.prefix or (
        len(after.prefix) < len(before.prefix) <= MAX_FIRST_LINE_INDENT and ">" not in before.prefix + after.prefix
    )


def _wraps(first: _Line, before: _Line, after: _Line, width: int) -> bool:
    """Whether the break between `before` and `after` is a wrap inside one paragraph."""
    if not MIN_WRAP_WIDTH <= width <= MAX_WRAP_WIDTH:
        return False
    if after.marker or not after.content or before.structured or after.structured:
        return False
    if not _continues(first, before, after):
        return False
    used = display_width(before.body.rstrip())
    return used >= FILLED_SHARE * width or used + 1 + display_width(first_word(after.content)) > width


def _groups(lines: list[_Line], width: int) -> list[list[_Line]]:
    """Non-blank lines grouped into units: a wrapped paragraph, or a line of its own."""
    groups: list[list[_Line]] = []
    previous: _Line | None = None  # the line just before, when it is in a group
    for line in lines:
        if line.blank or not line.content or line.code:
            previous = None
            continue
        if previous is not None and _wraps(groups[-1][0], previous, line, width):
            groups[-1].append(line)
        else:
            groups.append([line])
        previous = line
    return groups


def _separator(before: str, after: str) -> str:
    if _SPLIT_WORD.search(before) and after[:1].islower():
        return ""
    return join_separator(before, after)


def _escape(text: str, at_start: bool, at_end: bool) -> str:
    return text


def parse(data: bytes) -> TextDocument:
    text, bom = decode_text(data, NAME)
    lines = _lone_markers_as_text(_lines(text))
    doc = DocumentBuilder(text)
    pos = 0
    for group in _groups(lines, _wrap_width(lines)):
        first, last = group[0], group[-1]
        start = first.start + len(first.prefix) + len(first.marker)
        doc.literal(text[pos:start])
        pieces = UnitPieces()
        pieces.text(first.content, first.content)
        for before, after in zip(group, group[1:]):
            after_start = after.start + len(after.prefix)
            gap = text[before.start + len(before.prefix) + len(before.marker) + len(before.content) : after_start]
            pieces.text(_separator(before.content, after.content), gap)
            pieces.text(after.content, after.content)
        label = "paragraph" if len(group) > 1 else ""
        doc.literal(doc.place(pieces.pieces, offset=start, escape=_escape, label=label))
        pos = last.start + len(last.prefix) + len(last.marker) + len(last.content)
    doc.literal(text[pos:])
    return doc.build(bom=bom)


FORMAT = DocumentFormat(name=NAME, suffixes=(".txt", ".text"), media_type="text/plain", parse=parse, text=True)
