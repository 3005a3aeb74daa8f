"""SubStation Alpha (.ass Advanced SubStation, .ssa v4), read line by line.

The file starts with `[Script Info]`. In the `[Events]` section, the `Format:` line names
each event's fields (Text is always the last, so it may hold commas); every `Dialogue:` line
is a cue whose Text field is translated. Everything else stays byte for byte: [Script Info],
[V4+ Styles] and every style, Format lines, `Comment:` events, the other fields of a Dialogue
line (layer, start, end, style, name, margins, effect), [Fonts] and [Graphics] data. A
Dialogue line with fewer fields than its Format names stays as it is.

Inline markup: override blocks `{…}` are void tags (positioning `{\\an8}`, `{\\pos(…)}`,
colours, karaoke timing `{\\k20}`, comments), except that a block of style toggles only
(`{\\i1}`, `{\\b1\\i1}`) and the next block turning the same toggles off (`{\\i0}`) pair around
their words. `\\N` (line break), `\\n` (soft break), `\\h` (hard space) and libass's escaped
braces `\\{` `\\}` are void tags. A drawing (`{\\p1}m 0 0 l 100 0 100 100{\\p0}`, from the
block that turns drawing mode on to the one that turns it off) is one void tag: drawing
commands are not text. A drawing never turned off, and an opening brace that no closing brace
follows (libass shows it as text), run to the end of the field and stay there, outside the
unit. Translated text never holds a raw line break (each one a translation has is written
`\\N`) nor an opening brace (written full-width, U+FF5B, as it would open an override block).
"""
from __future__ import annotations

import re
from collections.abc import Iterator

from hymt.documents.subtitles.cue_document import Cue, CueDocument, replace_line_breaks
from hymt.documents.subtitles.cue_markup import Mark, Role, Text, Token, build_cue_text, split_markup
from hymt.documents.subtitles.lines import BOM, Line, decode, split_lines
from hymt.documents.units import DocumentFormat
from hymt.errors import InvalidDocumentError

NAME = "ass"
MEDIA_TYPE = "text/x-ssa"

#: The event fields when [Events] has no Format line (ASS v4+; SSA v4 has Marked for Layer).
DEFAULT_FIELDS: tuple[str, ...] = (
    "layer", "start", "end", "style", "name", "marginl", "marginr", "marginv", "effect", "text",
)
_SECTION = re.compile(r"\s*\[([^\]]*)\]\s*")
#: An override block, or an escape: line break, soft break, hard space, literal brace.
_MARKUP = re.compile(r"\\[Nnh{}]|\{[^}]*\}")
_BREAKS = ("\\N", "\\n", "\\h")
#: The first opening brace (not an escaped one) that no closing brace follows.
_UNCLOSED = re.compile(r"(?<!\\)\{[^}]*$")
_DRAWING = re.compile(r"\\p([0-9]+)")
_TOGGLES = re.compile(r"\{((?:\\[ibus][01])+)\}")
_TOGGLE = re.compile(r"\\([ibus])([01])")


def _drawing_level(block: str) -> int | None:
    """The drawing scale a block sets (`\\p1`: 1, `\\p0`: 0), None when it sets none."""
    levels = _DRAWING.findall(block)
    return int(levels[-1]) if levels else None


def _override(block: str) -> Mark:
    toggles = _TOGGLES.fullmatch(block)
    if toggles is not None:
        found = _TOGGLE.findall(toggles.group(1))
        key = "".join(sorted({name for name, _ in found}))
        values = {value for _, value in found}
        if values == {"1"}:
            return Mark(block, Role.OPEN, key)
        if values == {"0"}:
            return Mark(block, Role.CLOSE, key)
    return Mark(block)


def _read(field: str) -> tuple[list[Token], str]:
    """The tokens of a Text field, and its tail kept outside the unit: an unclosed `{` and
    what follows it (shown as text by libass), or a drawing never turned off. Both run to the
    end of the field and must stay there: moved before other text or markup, the brace would
    swallow the next override block and the drawing would draw the words after it."""
    unclosed = _UNCLOSED.search(field)
    head = field[: unclosed.start()] if unclosed else field
    tokens: list[Token] = []
    drawing: list[str] | None = None
    for piece, match in split_markup(_MARKUP, head):
        is_block = match is not None and piece.startswith("{")
        if drawing is not None:
            drawing.append(piece)
            if is_block and _drawing_level(piece) == 0:
                tokens.append(Mark("".join(drawing)))
                drawing = None
        elif match is None:
            tokens.append(Text(piece))
        elif is_block and _drawing_level(piece):
            drawing = [piece]
        elif is_block:
            tokens.append(_override(piece))
        else:
            tokens.append(Mark(piece, breaks=piece in _BREAKS))
    tail = field[len(head) :]
    return tokens, ("".join(drawing) + tail if drawing is not None else tail)


def _check_start(lines: list[Line]) -> None:
    first = next((line for line in lines if not line.blank), None)
    if first is None or first.body.lstrip(BOM).strip().lower() != "[script info]":
        found = first.body[:40] if first else ""
        number = first.number if first else 1
        raise InvalidDocumentError(f"{NAME}: line {number} must be [Script Info], not {found!r}", field="file")


def _dialogues(lines: list[Line]) -> Iterator[tuple[int, Line, str, str]]:
    """(cue number, line, its Text field, its Style field) of every Dialogue line that has
    all the fields its Format names."""
    _check_start(lines)
    section = ""
    fields = DEFAULT_FIELDS
    number = 0
    for line in lines:
        header = _SECTION.fullmatch(line.body.lstrip(BOM))
        if header is not None:
            section = header.group(1).strip().lower()
            continue
        key, colon, value = line.body.partition(":")
        if section != "events" or not colon:
            continue
        key = key.strip().lower()
        if key == "format":
            fields = tuple(field.strip().lower() for field in value.split(","))
            if fields[-1] != "text":
                raise InvalidDocumentError(
                    f"{NAME}: line {line.number}: the Format line must end with Text, not {fields[-1]!r}", field="file"
                )
        elif key == "dialogue":
            number += 1
            values = value.split(",", len(fields) - 1)
            if len(values) == len(fields):
                style = values[fields.index("style")].strip() if "style" in fields else ""
                yield number, line, values[-1], style


def _escape(text: str) -> str:
    """Translated text for a Text field: line breaks as `\\N`; an opening brace full-width, as
    it would start an override block (the field's own text never has one: see `_read`)."""
    return replace_line_breaks(text, "\\N").replace("{", "\uff5b")


def parse(data: bytes) -> CueDocument:
    text = decode(data, NAME)
    cues = []
    for number, line, field, style in _dialogues(split_lines(text)):
        tokens, tail = _read(field)
        cue_text = build_cue_text(tokens)
        if cue_text.translatable:
            end = line.end - len(tail)
            cues.append(Cue(line.end - len(field), end, cue_text, _escape, f"cue {number}", key=style))
    return CueDocument(text, cues)


FORMAT = DocumentFormat(name=NAME, suffixes=(".ass", ".ssa"), media_type=MEDIA_TYPE, parse=parse, text=True)
