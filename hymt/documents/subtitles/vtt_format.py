"""WebVTT (.vtt), read by the block rules of the W3C WebVTT parser.

The file starts with `WEBVTT`; the header runs to the first blank line. Blocks are separated
by blank lines. A block with `-->` in its first line, or in its second after a cue
identifier, is a cue: the timing line (with its cue settings) and the identifier stay as they
are, and the lines after it are the cue's text, up to a blank line or a line with `-->`
(which starts the next block, as in the W3C parser). Every other block (NOTE comments, STYLE
and REGION definitions, stray text, which players ignore) stays as it is and is never sent.

Inline markup: every `<…>` tag (`<i>`, `<b>`, `<u>`, `<c.class>`, `<v Speaker>`,
`<lang en>`, `<ruby>`, `<rt>` and their end tags pair when closed in the cue; an unclosed
`<v>` or `<lang>`, a timestamp `<00:00:01.500>` are void tags) and the line breaks inside a
cue. Character references are decoded for the model (`&amp;` reads `&`) and written back as
the cue wrote them: a character the cue writes as a reference is written so in the
translation, `&` and `<` always are (unless the cue itself has them bare), and `-->` never
appears in translated text. A reference whose character the cue also has bare, or spells two
ways, is kept as a void tag instead, so an identity render gives the input back exactly.
"""
from __future__ import annotations

import html
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from hymt.documents.subtitles.cue_document import Cue, CueDocument, fold_blank_lines, replace_line_breaks
from hymt.documents.subtitles.cue_markup import Mark, Role, Text, Token, build_cue_text, split_markup
from hymt.documents.subtitles.lines import BOM, Line, decode, split_lines
from hymt.documents.units import DocumentFormat
from hymt.errors import InvalidDocumentError

NAME = "vtt"
MEDIA_TYPE = "text/vtt"

ARROW = "-->"
_SIGNATURE = re.compile(r"WEBVTT(?:[ \t]|$)")
_MARKUP = re.compile(r"<[^<>]*>|&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);")
_TAG_NAME = re.compile(r"</?([^\s./>]*)")
#: Characters a translation must not leave bare, when the cue has no bare one of its own.
_ALWAYS_ESCAPED = {"&": "&amp;", "<": "&lt;"}


@dataclass(frozen=True)
class _CharRef:
    """A character reference (`&amp;`, `&#233;`) and the character it stands for."""

    raw: str
    char: str


@dataclass(frozen=True)
class _Escape:
    """Writes translated text into a cue: line breaks as the cue's `eol`, characters by
    `table` (a str.translate table), `-->` with its `>` escaped."""

    eol: str
    table: Mapping[int, str]

    def __call__(self, text: str) -> str:
        return replace_line_breaks(text, self.eol).translate(self.table).replace(ARROW, "--&gt;")


def _cue_blocks(lines: list[Line]) -> Iterator[tuple[int, Line, list[Line]]]:
    """(cue number, timing line, text lines) of every cue."""
    if not lines or _SIGNATURE.match(lines[0].body.lstrip(BOM)) is None:
        found = lines[0].body[:40] if lines else ""
        raise InvalidDocumentError(f"{NAME}: line 1 must start with WEBVTT, not {found!r}", field="file")
    index = 1
    while index < len(lines) and not lines[index].blank:
        index += 1
    number = 0
    while index < len(lines):
        if lines[index].blank:
            index += 1
            continue
        first = index
        arrow = first if ARROW in lines[first].body else None
        index += 1
        while index < len(lines) and not lines[index].blank:
            if ARROW in lines[index].body:
                if arrow is not None or index != first + 1:
                    break
                arrow = index
            index += 1
        if arrow is not None:
            number += 1
            yield number, lines[arrow], lines[arrow + 1 : index]


def _line_tokens(body: str) -> Iterator[Token | _CharRef]:
    for piece, match in split_markup(_MARKUP, body):
        if match is None:
            yield Text(piece)
        elif piece.startswith("&"):
            char = html.unescape(piece)
            if char == piece:
                yield Text(piece)
            else:
                yield _CharRef(piece, char) if len(char) == 1 else Mark(piece)
        else:
            name = _TAG_NAME.match(piece)
            key = name.group(1) if name else ""
            if piece.startswith("</"):
                yield Mark(piece, Role.CLOSE, key)
            else:
                yield Mark(piece) if key[:1].isdigit() else Mark(piece, Role.OPEN, key)


def _bare(tokens: list[Token | _CharRef]) -> set[str]:
    """The characters the cue writes as themselves, not as references."""
    return set("".join(token.text for token in tokens if isinstance(token, Text)))


def _resolve(
    tokens: list[Token | _CharRef], bare: set[str], *, decode_refs: bool
) -> tuple[list[Token], dict[str, str]]:
    """The tokens with each reference as text or as a void mark, and {character: reference}
    for those read as text."""
    spelling: dict[str, str] = {}
    resolved: list[Token] = []
    for token in tokens:
        if not isinstance(token, _CharRef):
            resolved.append(token)
        elif decode_refs and token.char not in bare and spelling.setdefault(token.char, token.raw) == token.raw:
            resolved.append(Text(token.char))
        else:
            resolved.append(Mark(token.raw))
    return resolved, spelling


def _cue(number: int, timing: Line, text_lines: list[Line]) -> Cue:
    tokens: list[Token | _CharRef] = []
    for index, line in enumerate(text_lines):
        if index:
            tokens.append(Mark(text_lines[index - 1].eol, breaks=True))
        tokens.extend(_line_tokens(line.body))
    bare = _bare(tokens)
    resolved, spelling = _resolve(tokens, bare, decode_refs=True)
    cue_text = build_cue_text(resolved)
    if not cue_text.tags_intact:  # a decoded "&lt;" made "<s1>" with the text after it
        resolved, spelling = _resolve(tokens, bare, decode_refs=False)
        cue_text = build_cue_text(resolved)
    table = {ord(char): raw for char, raw in _ALWAYS_ESCAPED.items() if char not in bare}
    table.update({ord(char): raw for char, raw in spelling.items()})
    eol = (text_lines[0].eol if len(text_lines) > 1 else timing.eol) or "\n"
    return Cue(text_lines[0].start, text_lines[-1].end, cue_text, _Escape(eol, table), f"cue {number}")


def parse(data: bytes) -> CueDocument:
    text = decode(data, NAME)
    cues = []
    for number, timing, text_lines in _cue_blocks(split_lines(text)):
        if text_lines:
            cue = _cue(number, timing, text_lines)
            if cue.text.translatable:
                cues.append(cue)
    return CueDocument(text, cues, fold_blank_lines)


FORMAT = DocumentFormat(name=NAME, suffixes=(".vtt",), media_type=MEDIA_TYPE, parse=parse, text=True)
