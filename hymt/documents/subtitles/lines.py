"""A subtitle file's text and its lines, each with its own line ending kept."""
from __future__ import annotations

import re
from dataclasses import dataclass

from hymt.documents.safety import check_size
from hymt.errors import InvalidDocumentError

#: A line ending: CRLF, LF, or a lone CR (as Python's universal newlines read them, and so
#: subtitle readers built on them). A CR before an LF is never a line ending of its own.
NEWLINE = r"(?:\r\n|\r(?!\n)|\n)"
_NEWLINE = re.compile(NEWLINE)
BOM = "\ufeff"


@dataclass(frozen=True)
class Line:
    """Line `number` (from 1) of the text: `body` starts at offset `start`, `eol` follows it
    ("" for a last line without an ending)."""

    number: int
    start: int
    body: str
    eol: str

    @property
    def end(self) -> int:
        """The offset just after the body (where its ending starts)."""
        return self.start + len(self.body)

    @property
    def blank(self) -> bool:
        return not self.body.strip().lstrip(BOM)


def split_lines(text: str) -> list[Line]:
    """Every line of `text`; their bodies and endings concatenate to `text`."""
    lines: list[Line] = []
    start = 0
    for match in _NEWLINE.finditer(text):
        lines.append(Line(len(lines) + 1, start, text[start : match.start()], match.group()))
        start = match.end()
    if start < len(text):
        lines.append(Line(len(lines) + 1, start, text[start:], ""))
    return lines


def decode(data: bytes, format_name: str) -> str:
    """The file's text: UTF-8, a byte order mark kept as the first character so that the
    output has it too. Anything else is refused, naming the first line that is not UTF-8."""
    check_size(data, format_name)
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InvalidDocumentError(f"{format_name}: the file is UTF-16 text; save it as UTF-8", field="file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InvalidDocumentError(
            f"{format_name}: line {line} is not UTF-8 text (byte {data[exc.start]:#04x}); save the file as UTF-8",
            field="file",
        ) from exc
