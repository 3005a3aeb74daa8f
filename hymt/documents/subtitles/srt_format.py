"""SubRip (.srt): cues of an index line, a timing line and text lines, separated by blank
lines.

SubRip has no specification; this reads what players accept. A timing line is a line with
only timestamp characters before its first `-->` and a digit in it (malformed timings are
still timing lines and keep their bytes); the digits-only line right before it is the cue's
index. A cue's text is the block of non-blank lines after its timing line. Text after a blank
line that starts no cue (players show it as more of the cue before) is a unit of its own,
labelled by its line; text before the first cue is shown by no player and stays as it is.
A file without any timing line is refused. A translated line that would read as a timing
line has its `-->` written `→`.

Inline markup: `<b>`, `<i>`, `<u>`, `<s>`, `<font …>` and their end tags (pairs when closed
in the cue), the `{\\an8}`-style override blocks some players read, and the line breaks inside
a cue (void tags). SubRip has no escapes: text is written as it is, except that line breaks
in a translation become the cue's line ending and blank lines are folded away.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from functools import partial

from hymt.documents.subtitles.cue_document import Cue, CueDocument, fold_blank_lines, replace_line_breaks
from hymt.documents.subtitles.cue_markup import Mark, Role, Text, Token, build_cue_text, split_markup
from hymt.documents.subtitles.lines import BOM, Line, decode, split_lines
from hymt.documents.units import DocumentFormat
from hymt.errors import InvalidDocumentError

NAME = "srt"
MEDIA_TYPE = "application/x-subrip"

ARROW = "-->"
_TIMING = re.compile(r"[0-9:.,;\s]*-->")
_DIGIT = re.compile(r"[0-9]")
_INDEX = re.compile(r"\s*[0-9]+\s*")
_MARKUP = re.compile(r"</?(?:b|i|u|s|font)(?=[\s>])[^<>]*>|\{\\[^{}]*\}", re.IGNORECASE)
_TAG_NAME = re.compile(r"</?([A-Za-z]+)")


def _is_timing(line: Line) -> bool:
    body = line.body.lstrip(BOM)
    return _TIMING.match(body) is not None and _DIGIT.search(body) is not None


def _is_index(line: Line) -> bool:
    return _INDEX.fullmatch(line.body.lstrip(BOM)) is not None


def _blocks(lines: list[Line]) -> Iterator[list[Line]]:
    """The runs of non-blank lines."""
    block: list[Line] = []
    for line in lines:
        if line.blank:
            if block:
                yield block
            block = []
        else:
            block.append(line)
    if block:
        yield block


def _text_blocks(lines: list[Line]) -> Iterator[tuple[str, list[Line], str]]:
    """(where, lines, the line ending of their cue) of every block of text after a timing
    line, up to the next cue's index or timing line."""
    timings = [index for index, line in enumerate(lines) if _is_timing(line)]
    if not timings:
        raise InvalidDocumentError(
            f"{NAME}: no cue timing line (such as 00:00:01,000 --> 00:00:02,500) in the file", field="file"
        )
    starts = [
        timing - 1 if timing - 1 > (timings[k - 1] if k else -1) and _is_index(lines[timing - 1]) else timing
        for k, timing in enumerate(timings)
    ]
    for k, timing in enumerate(timings):
        end = starts[k + 1] if k + 1 < len(timings) else len(lines)
        for n, block in enumerate(_blocks(lines[timing + 1 : end])):
            where = f"cue {k + 1}" if n == 0 else f"line {block[0].number}"
            eol = block[0].eol if len(block) > 1 else lines[timing].eol
            yield where, block, eol or "\n"


def _line_tokens(body: str) -> Iterator[Token]:
    for piece, match in split_markup(_MARKUP, body):
        if match is None:
            yield Text(piece)
        elif piece.startswith("{"):
            yield Mark(piece)
        else:
            name = _TAG_NAME.match(piece)
            assert name is not None
            yield Mark(piece, Role.CLOSE if piece.startswith("</") else Role.OPEN, name.group(1).lower())


def _tokens(block: list[Line]) -> list[Token]:
    tokens: list[Token] = []
    for index, line in enumerate(block):
        if index:
            tokens.append(Mark(block[index - 1].eol, breaks=True))
        tokens.extend(_line_tokens(line.body))
    return tokens


def _escape(eol: str, text: str) -> str:
    return replace_line_breaks(text, eol)


def _finish(text: str) -> str:
    """A rendered cue text without blank lines, and without a line that would read as a
    timing line (the translation's `-->` after digits): its arrow is written `→`. The cue's
    own lines never read so (they would be timings), so its identity render keeps them."""
    text = fold_blank_lines(text)
    if ARROW not in text:
        return text
    return "".join((line.body.replace(ARROW, "→") if _is_timing(line) else line.body) + line.eol
                   for line in split_lines(text))


def parse(data: bytes) -> CueDocument:
    text = decode(data, NAME)
    cues = []
    for where, block, eol in _text_blocks(split_lines(text)):
        cue_text = build_cue_text(_tokens(block))
        if cue_text.translatable:
            cues.append(Cue(block[0].start, block[-1].end, cue_text, partial(_escape, eol), where))
    return CueDocument(text, cues, _finish)


FORMAT = DocumentFormat(name=NAME, suffixes=(".srt",), media_type=MEDIA_TYPE, parse=parse, text=True)
