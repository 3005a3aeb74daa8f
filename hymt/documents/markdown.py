"""Markdown: each paragraph, heading, list item, table cell and footnote text is a unit.

Parsed by markdown-it-py (CommonMark with GFM tables and strikethrough, front matter,
footnotes and `$` math). Inline markup travels as numbered tags: emphasis, strong,
strikethrough and links are paired tags (a link's target stays in its closing markup),
while inline code, math, hard breaks, autolinks, footnote references, inline HTML that is
not a pair and images are void tags carrying their source. An image's alt text is a unit of
its own. Code blocks, front matter, raw HTML inside containers, math blocks, thematic
breaks, link reference definitions and all block markers stay as they are; raw HTML blocks
at the top level go through the HTML format. A translated paragraph comes back as one line
after the first line's markers; untranslated blocks keep their exact bytes.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.utils import EnvType
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.footnote import footnote_plugin
from mdit_py_plugins.front_matter import front_matter_plugin

from hymt.documents.document_builder import DocumentBuilder
from hymt.documents.html import add_html
from hymt.documents.markdown_inline import InlineReader, Misaligned, SourceLine, content_offsets
from hymt.documents.text_document import Escape, TextDocument, decode_text
from hymt.documents.units import DocumentFormat

NAME = "markdown"

_LINE = re.compile(r"[^\r\n]*(\r\n|\r|\n|$)")
_SPECIAL = re.compile(r"[\\`*_\[\]<$]|~~|&(?=#?\w+;)")
_CELL_SPECIAL = re.compile(r"[\\`*_\[\]<$|]|~~|&(?=#?\w+;)")
_ORDERED_MARKER = re.compile(r"(\d+)[.)]")
_BLOCK_MARKERS = frozenset("#>+=-")
_NEWLINES = re.compile(r"\s*[\r\n]+\s*")
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+[ \t]*\Z")
_LABELS = {"paragraph_open": "paragraph", "heading_open": "heading", "th_open": "table cell", "td_open": "table cell"}


@functools.cache
def parser() -> MarkdownIt:
    """The markdown-it configuration this format reads with."""
    md = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    md.use(front_matter_plugin).use(footnote_plugin)
    # `$5 and $10` stays text: math needs no space inside its dollars and no digit after.
    md.use(dollarmath_plugin, allow_space=False, allow_digits=False, double_inline=True)
    # Escapes and entities stay tokens of their own, so their source can be found.
    md.disable("text_join")
    return md


def _escape(text: str, at_start: bool, at_end: bool, *, special: re.Pattern[str]) -> str:
    """Translated text for Markdown inline content: one line, with every character that
    could start markup escaped; at the start of the block also list, heading and quote
    markers, and at its end a `#` that a heading would take for its closing sequence."""
    text = _NEWLINES.sub(" ", text)
    if at_start:
        text = text.lstrip()
    if at_end:
        text = text.rstrip()
    text = special.sub(lambda m: "".join("\\" + ch for ch in m.group(0)), text)
    if at_start:
        number = _ORDERED_MARKER.match(text)
        if number:
            text = number.group(1) + "\\" + text[number.end(1) :]
        elif text[:1] in _BLOCK_MARKERS:
            text = "\\" + text
    if at_end and text.endswith("#"):
        text = text[:-1] + "\\#"
    return text


def escape_markdown(text: str, at_start: bool = False, at_end: bool = False) -> str:
    return _escape(text, at_start, at_end, special=_SPECIAL)


def escape_table_cell(text: str, at_start: bool = False, at_end: bool = False) -> str:
    return _escape(text, at_start, at_end, special=_CELL_SPECIAL)


def _lines(text: str) -> list[SourceLine]:
    lines = []
    for match in _LINE.finditer(text):
        lines.append(SourceLine(match.start(), match.start(1)))
        if not match.group(1):
            break
    return lines


def _paragraph_ends(line: str, last: bool) -> Sequence[int]:
    return (len(line.rstrip()),) if last else (len(line),)


def _heading_ends(line: str, last: bool) -> Sequence[int]:
    stripped = line.rstrip()
    return (len(stripped), len(_CLOSING_HASHES.sub("", stripped).rstrip()))


@dataclass(frozen=True)
class _Region:
    """A block that holds units: an inline token (with its content's offsets) or an HTML
    block, at text[start:end]."""

    start: int
    end: int
    index: int
    offsets: tuple[int, ...] = ()


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = _lines(text)
        self.env: EnvType = {}
        self.tokens = parser().parse(text, self.env)
        self.doc = DocumentBuilder(text)
        self.cells: dict[int, list[tuple[int, int]]] = {}  # table row -> cells not yet matched

    def regions(self) -> list[_Region]:
        """Every block that holds units, in source order."""
        found: list[_Region] = []
        for index, token in enumerate(self.tokens):
            if token.map is None:
                continue
            if token.type == "html_block":
                start, end = self.lines[token.map[0]].start, self.line_end(token.map[1] - 1)
                if _normalized(self.text[start:end]) == token.content:
                    found.append(_Region(start, end, index))
            elif token.type == "inline" and token.content.strip():
                try:
                    offsets = self.offsets(index)
                except Misaligned:
                    continue
                found.append(_Region(offsets[0], offsets[-1], index, tuple(offsets)))
        found.sort(key=lambda region: (region.start, region.end))
        return [region for region, after in zip(found, found[1:]) if region.end <= after.start] + found[-1:]

    def line_end(self, line: int) -> int:
        return self.lines[line + 1].start if line + 1 < len(self.lines) else len(self.text)

    def offsets(self, index: int) -> list[int]:
        token, opener = self.tokens[index], self.tokens[index - 1]
        if token.map is None:
            raise Misaligned("an inline token without lines")
        first, last = token.map
        if opener.type in ("th_open", "td_open"):
            return self.cell_offsets(token.content, first)
        if opener.type == "heading_open" and opener.markup.startswith("#"):
            return content_offsets(token.content, self.text, self.lines[first:last], _heading_ends, table=False)
        return content_offsets(token.content, self.text, self.lines[first:last], _paragraph_ends, table=False)

    def cell_offsets(self, content: str, row: int) -> list[int]:
        """Offsets of a table cell's content: in the next cell of its row that holds it."""
        line = self.lines[row]
        source = self.text[line.start : line.body_end]
        queue = self.cells.setdefault(row, _cells(source))
        while queue:
            start, end = queue.pop(0)
            if source[start:end].strip().replace("\\|", "|") == content:
                cell = [SourceLine(line.start, line.start + end)]
                return content_offsets(content, self.text, cell, _paragraph_ends, table=True)
        raise Misaligned("table cell not found")

    def add(self, region: _Region) -> None:
        token = self.tokens[region.index]
        if token.type == "html_block":
            add_html(self.doc, self.text[region.start : region.end], base=region.start)
            return
        opener = self.tokens[region.index - 1]
        cell = opener.type in ("th_open", "td_open")
        escape: Escape = escape_table_cell if cell else escape_markdown
        # A list item's first paragraph may start with a task box, `[ ]` or `[x]`.
        item = self.tokens[region.index - 2] if region.index >= 2 else None
        task = opener.type == "paragraph_open" and item is not None and item.type == "list_item_open"
        reader = InlineReader(parser(), self.env, self.doc, self.text, token.content, list(region.offsets), escape)
        checkpoint = self.doc.checkpoint()
        try:
            pieces = reader.read(token.children or [], task_item=task)
        except Misaligned:
            self.doc.discard_since(checkpoint)  # image alt texts already placed
            self.doc.literal(self.text[region.start : region.end])
            return
        label = _LABELS.get(opener.type, "block")
        self.doc.literal(self.doc.place(
            pieces.pieces, offset=region.start, escape=escape, label=label, split=not cell, spaces_outside_tags=True
        ))


def _cells(row: str) -> list[tuple[int, int]]:
    """(start, end) of each stretch of a table row between unescaped pipes."""
    bounds = [-1] + [i for i, ch in enumerate(row) if ch == "|" and row[i - 1 : i] != "\\"] + [len(row)]
    return [(a + 1, b) for a, b in zip(bounds, bounds[1:])]


def _normalized(source: str) -> str:
    return source.replace("\r\n", "\n").replace("\r", "\n").replace("\0", "\ufffd")


def parse(data: bytes) -> TextDocument:
    text, bom = decode_text(data, NAME)
    reader = _Reader(text)
    pos = 0
    for region in reader.regions():
        reader.doc.literal(text[pos : region.start])
        reader.add(region)
        pos = region.end
    reader.doc.literal(text[pos:])
    return reader.doc.build(bom=bom)


FORMAT = DocumentFormat(
    name=NAME, suffixes=(".md", ".markdown"), media_type="text/markdown", parse=parse, text=True
)
