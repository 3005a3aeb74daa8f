"""The inline content of one Markdown block as unit pieces with their exact source.

markdown-it gives block tokens line ranges (`token.map`) but inline tokens no positions, and
an inline token's content is its lines without container prefixes (`> `, list indentation)
or a table cell without its escaped pipes. So the content is aligned with its source lines
first (`content_offsets`: each content line is the end of its source line), then the inline
tokens are walked in order over the content, each at the position where the one before
ended: text is there verbatim, markers (`**`, `[`) are their markup, and a construct whose
extent the token does not tell (code span, link destination, image, autolink, math,
footnote reference) is measured by markdown-it's own `skipToken` at that position. Any
disagreement raises `Misaligned`, and the block then stays as it is.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.helpers import parseLinkLabel
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from markdown_it.utils import EnvType

from hymt.documents.document_builder import DocumentBuilder, Text, UnitPieces
from hymt.documents.line_breaks import join_separator
from hymt.documents.text_document import Escape, Template

_SOFTBREAK = re.compile(r"[ ]*\n[ \t]*")
_HARDBREAK = re.compile(r"(?:[ ]*|\\)\n[ \t]*")
_TASK_MARKER = re.compile(r"\[[ xX]\][ \t]+")
_HTML_OPEN = re.compile(r"<([A-Za-z][A-Za-z0-9-]*)(?:\s[^>]*)?(?<!/)>\Z")
_HTML_CLOSE = re.compile(r"</([A-Za-z][A-Za-z0-9-]*)\s*>\Z")
_HTML_VOID = frozenset("area base br col embed hr img input link meta source track wbr".split())
_PAIRED = {"em_open": "em_close", "strong_open": "strong_close", "s_open": "s_close"}
#: Inline tokens kept whole as void tags: what they hold is never translated.
_KEPT_WHOLE = frozenset(("code_inline", "math_inline", "math_inline_double", "footnote_ref", "html_inline"))


class Misaligned(ValueError):
    """The inline tokens do not match the source as expected."""


@dataclass(frozen=True)
class SourceLine:
    start: int
    body_end: int  # before the line ending


def align_line(content: str, source: str, end: int, *, table: bool) -> list[int] | None:
    """Positions in `source` of each character of `content` and of its end, matching it to
    the end of `source[:end]` from right to left; None when it does not match. In a table
    cell `|` matches the `\\|` it was written as; leading spaces may be a tab's expansion."""
    offsets = [0] * (len(content) + 1)
    offsets[len(content)] = end
    j = end
    for i in range(len(content) - 1, -1, -1):
        ch = content[i]
        if table and ch == "|" and source[j - 2 : j] == "\\|":
            j -= 2
        elif j > 0 and (source[j - 1] == ch or ch == "\ufffd" and source[j - 1] == "\0"):
            j -= 1
        elif ch in " \t" and not content[:i].strip(" \t"):
            pass
        else:
            return None
        offsets[i] = j
    return offsets


def content_offsets(
    content: str, text: str, lines: Sequence[SourceLine], ends: Callable[[str, bool], Sequence[int]], *, table: bool
) -> list[int]:
    """The document offset of each character of `content` (and of its end), the content
    lines being the ends of `lines`; `ends(line, last)` lists where a content line may end."""
    parts = content.split("\n")
    if len(parts) > len(lines):
        raise Misaligned("more content lines than source lines")
    offsets: list[int] = []
    for k, (part, line) in enumerate(zip(parts, lines)):
        source = text[line.start : line.body_end]
        for end in ends(source, k == len(parts) - 1):
            found = align_line(part, source, end, table=table)
            if found is not None:
                break
        else:
            raise Misaligned(f"line {k} of the content is not in its source line")
        offsets.extend(line.start + pos for pos in found[:-1])
        offsets.append(line.start + found[-1] if k == len(parts) - 1 else line.body_end)
    return offsets


def _html_pairs(children: Sequence[Token]) -> set[int]:
    """Indexes of html_inline tokens that open or close an element paired inside the block
    and nesting properly with the Markdown markup around them."""
    paired: set[int] = set()
    stack: list[tuple[str, int]] = []  # ("" for Markdown markup, else html tag name; index)
    for index, child in enumerate(children):
        if child.type == "html_inline":
            opened = _HTML_OPEN.match(child.content)
            closed = _HTML_CLOSE.match(child.content)
            if opened and opened.group(1).lower() not in _HTML_VOID:
                stack.append((opened.group(1).lower(), index))
            elif closed and stack and stack[-1][0] == closed.group(1).lower():
                paired.update((stack.pop()[1], index))
        elif child.nesting == 1:
            stack.append(("", index))
        elif child.nesting == -1:
            while stack and stack.pop()[0]:
                pass
    return paired


class InlineReader:
    """Reads one inline token into unit pieces (sources in document coordinates)."""

    def __init__(
        self, md: MarkdownIt, env: EnvType, doc: DocumentBuilder, text: str, content: str, offsets: list[int],
        escape: Escape,
    ) -> None:
        self.md, self.env, self.doc, self.text = md, env, doc, text
        self.content, self.offsets, self.escape = content, offsets, escape
        self.pieces = UnitPieces()
        self.pos = 0
        # One state for every measurement: it caches what it has scanned (backtick runs).
        self.state = StateInline(content, md, env, [])

    def source(self, start: int, end: int) -> str:
        return self.text[self.offsets[start] : self.offsets[end]]

    def extent(self, start: int) -> int:
        """Where the construct at `start` ends, as markdown-it's tokenizer measures it."""
        self.state.pos, self.state.posMax = start, len(self.content)
        self.md.inline.skipToken(self.state)
        return self.state.pos

    def label_end(self, bracket: int) -> int:
        self.state.pos, self.state.posMax = bracket, len(self.content)
        end: int = parseLinkLabel(self.state, bracket, False)
        if end < 0:
            raise Misaligned("no link label")
        return end

    def expect(self, literal: str) -> str:
        if not literal or not self.content.startswith(literal, self.pos):
            raise Misaligned(f"expected {literal!r} at {self.pos}")
        start, self.pos = self.pos, self.pos + len(literal)
        return self.source(start, self.pos)

    def take(self, end: int) -> str:
        if end <= self.pos:
            raise Misaligned(f"empty construct at {self.pos}")
        start, self.pos = self.pos, end
        return self.source(start, end)

    def read(self, children: Sequence[Token], *, task_item: bool) -> UnitPieces:
        paired_html = _html_pairs(children)
        stack: list[tuple[int, int]] = []  # (key, where the link's source ends or -1)
        html_keys: list[int] = []
        skip_to: str | None = None
        for index, child in enumerate(children):
            if skip_to is not None:
                skip_to = None if child.type == skip_to else skip_to
                continue
            kind = child.type
            if kind == "text":
                self.text_token(child.content, task_item and index == 0)
            elif kind == "text_special":
                self.pieces.text(child.content, self.expect(child.markup))
            elif kind == "softbreak":
                self.softbreak()
            elif kind == "hardbreak":
                self.pieces.void((self.take(self.match(_HARDBREAK)),))
            elif kind in _PAIRED:
                stack.append((self.pieces.open((self.expect(child.markup),)), -1))
            elif kind in _PAIRED.values():
                self.pieces.close(stack.pop()[0], (self.expect(child.markup),))
            elif kind == "link_open" and child.info == "auto":
                self.pieces.void((self.take(self.extent(self.pos)),))
                skip_to = "link_close"
            elif kind == "link_open":
                stack.append(self.link_open())
            elif kind == "link_close":
                self.link_close(*stack.pop())
            elif kind == "image":
                self.pieces.void(self.image(child))
            elif kind == "html_inline" and index in paired_html and _HTML_OPEN.match(child.content):
                html_keys.append(self.pieces.open((self.expect(child.content),)))
            elif kind == "html_inline" and index in paired_html:
                self.pieces.close(html_keys.pop(), (self.expect(child.content),))
            elif kind == "html_inline":
                self.pieces.void((self.expect(child.content),))
            elif kind in _KEPT_WHOLE:
                self.pieces.void((self.take(self.extent(self.pos)),))
            else:
                raise Misaligned(f"unexpected inline token {kind}")
        if self.pos != len(self.content):
            raise Misaligned("content left after the last token")
        return self.pieces

    def match(self, pattern: re.Pattern[str]) -> int:
        found = pattern.match(self.content, self.pos)
        if found is None:
            raise Misaligned(f"expected {pattern.pattern} at {self.pos}")
        return found.end()

    def text_token(self, content: str, task_item: bool) -> None:
        marker = _TASK_MARKER.match(content) if task_item else None
        if marker:
            self.pieces.void((self.expect(marker.group(0)),))
            content = content[marker.end() :]
        if content:
            self.pieces.text(content, self.expect(content))

    def softbreak(self) -> None:
        end = self.match(_SOFTBREAK)
        last = self.pos  # the last character of the line, before its trailing spaces
        while last > 0 and self.content[last - 1] == " ":
            last -= 1
        separator = join_separator(self.content[last - 1 : last], self.content[end : end + 1])
        self.pieces.text(separator, self.take(end))

    def link_open(self) -> tuple[int, int]:
        end = self.extent(self.pos)
        label_end = self.label_end(self.pos)
        label = re.sub(r"\s+", " ", self.content[self.pos + 1 : label_end]).strip()
        tail = self.content[label_end + 1 : end]
        # A shortcut or collapsed reference link's text is its label: a translated text
        # needs the label written out to keep the link.
        changed: Template | None = (f"][{label}]",) if tail in ("", "[]") else None
        return self.pieces.open((self.expect("["),), close_if_changed=changed), end

    def link_close(self, key: int, end: int) -> None:
        if self.content[self.pos : self.pos + 1] != "]":
            raise Misaligned(f"expected ']' at {self.pos}")
        self.pieces.close(key, (self.take(end),))

    def image(self, token: Token) -> Template:
        """An image as a void tag; its alt text is a unit of its own inside the markup,
        unless it is also the label of a reference."""
        start = self.pos
        end = self.extent(start)
        label_end = self.label_end(start + 1)
        tail = self.content[label_end + 1 : end]
        self.take(end)
        if not (tail.startswith("(") or tail.startswith("[") and tail != "[]"):
            return (self.source(start, end),)
        alt = Text(_plain(token.children or []), self.source(start + 2, label_end))
        slot = self.doc.place([alt], offset=self.offsets[start + 2], escape=self.escape, label="image alt", split=False)
        return (self.source(start, start + 2), *slot, self.source(label_end, end))


def _plain(tokens: Sequence[Token]) -> str:
    """An image's alt text as a reader gets it."""
    parts: list[str] = []
    for token in tokens:
        if token.type in ("text", "text_special", "code_inline"):
            parts.append(token.content)
        elif token.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif token.type == "image":
            parts.append(_plain(token.children or []))
    return "".join(parts)
