"""Excel workbooks (.xlsx) through openpyxl.

Units: every cell of every worksheet whose value is a string with a letter in it (shared and
inline strings alike), row by row, one unit per cell, never split. Rich-text cells (openpyxl
`rich_text=True`) carry their runs' fonts as tags, the font covering most characters being
the cell's plain text. Formulas, numbers, dates, booleans, styles, merged ranges, column
widths, comments, data validation, defined names and sheet names are not units and are
written back as openpyxl read them. Sheet names stay untranslated on purpose: formulas,
defined names and other workbooks refer to sheets by name.
"""
from __future__ import annotations

import io
import zipfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import openpyxl
from openpyxl.cell.cell import Cell
from openpyxl.cell.rich_text import CellRichText, TextBlock
from openpyxl.cell.text import InlineFont
from openpyxl.utils.exceptions import InvalidFileException
from openpyxl.workbook.workbook import Workbook

from hymt.documents.placeholders import PROSE
from hymt.documents.safety import check_zip
from hymt.documents.unit_text import Literal, UnitText
from hymt.documents.units import DocumentFormat, ParsedDocument, TagNode, Tree, Unit
from hymt.errors import InvalidDocumentError

NAME = "xlsx"
MEDIA_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


@dataclass(frozen=True)
class _Font:
    """Tag markup: text in this inline font."""

    font: InlineFont


@dataclass(frozen=True)
class _CellUnit:
    sheet: str
    coordinate: str
    text: str
    markup: dict[int, _Font | Literal]
    #: the font of the plain text of a rich-text cell; None for a plain string cell.
    plain_font: InlineFont | None
    rich: bool


def _open(data: bytes) -> Workbook:
    check_zip(data, NAME)
    try:
        return openpyxl.load_workbook(io.BytesIO(data), rich_text=True)
    except (InvalidFileException, KeyError, ValueError, TypeError, zipfile.BadZipFile, OSError) as exc:
        raise InvalidDocumentError(f"{NAME}: the file is not a readable Excel workbook: {exc}", field="file") from exc


def _read_cell(sheet: str, cell: Cell) -> _CellUnit | None:
    value = cell.value
    if cell.data_type != "s" or not isinstance(value, str | CellRichText):
        return None
    unit: UnitText[_Font] = UnitText(PROSE)
    if isinstance(value, str):
        unit.add_text(value)
        plain, rich = None, False
    else:
        plain, rich = _plain_font(value), True
        for part in value:
            font = part.font if isinstance(part, TextBlock) else None
            text = part.text if isinstance(part, TextBlock) else part
            if font is None or font == plain:
                unit.add_text(text)
            else:
                unit.open(_Font(font))
                unit.add_text(text)
                unit.close()
    if not unit.translatable:
        return None
    return _CellUnit(sheet, cell.coordinate, unit.text, unit.markup, plain, rich)


def _plain_font(value: CellRichText) -> InlineFont | None:
    """The inline font of most characters (None: the cell's own font)."""
    counts: Counter[InlineFont | None] = Counter()
    for part in value:
        if isinstance(part, TextBlock):
            counts[part.font] += len(part.text)
        else:
            counts[None] += len(part)
    return counts.most_common(1)[0][0] if counts else None


def _cells(workbook: Workbook) -> list[_CellUnit]:
    found = []
    for sheet in workbook.worksheets:
        for row in sheet.iter_rows():
            for cell in row:
                read = _read_cell(sheet.title, cell)
                if read is not None:
                    found.append(read)
    return found


def _rich_parts(tree: Tree, markup: dict[int, _Font | Literal], font: InlineFont | None) -> list[str | TextBlock]:
    parts: list[str | TextBlock] = []
    for node in tree:
        if isinstance(node, str):
            parts.append(TextBlock(font, node) if font is not None else node)
            continue
        tag = markup[node.number]
        if isinstance(tag, Literal):
            parts += _rich_parts((tag.open, *node.children, tag.close) if not node.void else (tag.open,), markup, font)
        else:
            parts += _rich_parts(node.children, markup, tag.font)
    return [part for part in parts if (part.text if isinstance(part, TextBlock) else part)]


def _plain(tree: Tree, markup: dict[int, _Font | Literal]) -> str:
    return "".join(_plain_node(node, markup) for node in tree)


def _plain_node(node: str | TagNode, markup: dict[int, _Font | Literal]) -> str:
    if isinstance(node, str):
        return node
    tag = markup[node.number]
    inner = _plain(node.children, markup)
    return tag.open + inner + tag.close if isinstance(tag, Literal) else inner


class XlsxDocument(ParsedDocument):
    def __init__(self, data: bytes) -> None:
        self._data = data
        self._cells = _cells(_open(data))
        self._units = tuple(Unit(c.text, split=False, where=f"{c.sheet}!{c.coordinate}") for c in self._cells)

    @property
    def units(self) -> tuple[Unit, ...]:
        return self._units

    def render(self, translations: Sequence[Tree]) -> bytes:
        workbook = _open(self._data)
        for read, tree in zip(self._cells, translations):
            cell = workbook[read.sheet][read.coordinate]
            if read.rich:
                cell.value = CellRichText(_rich_parts(tree, read.markup, read.plain_font))
            else:
                cell.value = _plain(tree, read.markup)
            # A translation that starts with "=" is still text, not a formula.
            cell.data_type = "s"
        out = io.BytesIO()
        workbook.save(out)
        return out.getvalue()


def parse(data: bytes) -> XlsxDocument:
    return XlsxDocument(data)


FORMAT = DocumentFormat(name=NAME, suffixes=(".xlsx",), media_type=MEDIA_TYPE, parse=parse)
