"""PDF with a text layer (.pdf): its text read with pdfminer.six, translated, and written as a
Word document (.docx) with python-docx. A PDF is a page description, not an editable text, so
there is no translated PDF to write back: the output is a DOCX with the text in reading order.

What it gives: one section per page, of the page's size; one paragraph per text block that
pdfminer's layout analysis finds, in its reading order; blocks set markedly larger than the
body text as headings (up to three levels, by size); bold and italic (read from font names)
as run formatting, carried through translation as tags. Lines of a block are joined (a word
hyphenated at a line's end is joined again); blocks without a letter (page numbers) are
copied, not translated.

What it loses: exact positions, columns and page layout, fonts, sizes and colours (beyond
headings, bold and italic), images and vector graphics, tables (their cells come out as
blocks of text), links, form fields, annotations and metadata. A scanned PDF has no text to
read: it is an InvalidDocumentError (no OCR).

Safety: pypdf opens the file first, with its limits on how far a stream may inflate, and the
page contents are inflated through it; pdfminer.six (which has no such limit) then reads
only a file that passed. A PDF protected by a user password is refused.
"""
from __future__ import annotations

import io
import re
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import docx
from docx.enum.section import WD_ORIENT, WD_SECTION
from docx.section import Section
from docx.shared import Pt
from docx.text.paragraph import Paragraph
from pdfminer.high_level import extract_pages
from pdfminer.layout import LAParams, LTAnno, LTChar, LTPage, LTTextBox, LTTextLine
from pdfminer.pdfexceptions import PDFException
from pdfminer.psexceptions import PSException
from pypdf import PdfReader
from pypdf.errors import PyPdfError

from hymt.documents.docx_format import MEDIA_TYPE as DOCX_MEDIA_TYPE
from hymt.documents.inline_tags import parse_tree
from hymt.documents.placeholders import PROSE
from hymt.documents.safety import MAX_PDF_PAGES, check_size
from hymt.documents.unit_text import Literal, UnitText
from hymt.documents.units import DocumentFormat, ParsedDocument, Tree, Unit
from hymt.errors import InvalidDocumentError

NAME = "pdf"
MEDIA_TYPE = "application/pdf"
#: A block whose text is this much larger than the body text is a heading.
HEADING_SIZE_RATIO = 1.15
#: A heading is at most this long; a longer block is a paragraph whatever its size.
MAX_HEADING_CHARS = 200
_BOLD = re.compile(r"bold|black|heavy|semibold|demi", re.IGNORECASE)
_ITALIC = re.compile(r"italic|oblique", re.IGNORECASE)
_CJK = re.compile(r"[\u3000-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")


@dataclass(frozen=True)
class _Style:
    """Tag markup: text in this style."""

    bold: bool
    italic: bool


@dataclass(frozen=True)
class _Block:
    """A paragraph of a page: a unit's text (or literal text), its markup, its style."""

    text: str
    markup: dict[int, _Style | Literal]
    style: _Style
    size: float
    unit: bool
    heading: int = 0


@dataclass(frozen=True)
class _Page:
    width: float
    height: float
    blocks: tuple[_Block, ...]


def _check(data: bytes) -> None:
    check_size(data, NAME)
    if not data.lstrip().startswith(b"%PDF"):
        raise InvalidDocumentError(f"{NAME}: the file is not a PDF (no %PDF header)", field="file")
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise InvalidDocumentError(f"{NAME}: the file is password-protected; remove the password first",
                                       field="file")
        if len(reader.pages) > MAX_PDF_PAGES:
            raise InvalidDocumentError(f"{NAME}: the file has {len(reader.pages)} pages, more than the limit of "
                                       f"{MAX_PDF_PAGES}", field="file")
        for page in reader.pages:
            contents = page.get_contents()
            if contents is not None:
                contents.get_data()
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise InvalidDocumentError(f"{NAME}: the file is not a readable PDF: {exc}", field="file") from exc


def _char_style(char: LTChar) -> _Style:
    return _Style(bool(_BOLD.search(char.fontname)), bool(_ITALIC.search(char.fontname)))


def _line_pieces(line: LTTextLine) -> list[tuple[str, _Style, float]]:
    pieces: list[tuple[str, _Style, float]] = []
    style, size = _Style(False, False), 0.0
    for item in line:
        if isinstance(item, LTChar):
            style, size = _char_style(item), item.size
            pieces.append((item.get_text(), style, size))
        elif isinstance(item, LTAnno) and item.get_text() != "\n":
            pieces.append((item.get_text(), style, 0.0))
    return pieces


def _joined(lines: list[list[tuple[str, _Style, float]]]) -> list[tuple[str, _Style, float]]:
    """A block's lines as one run of characters: a space between lines, none between CJK
    characters, a hyphen at a line's end before a lower-case letter removed."""
    out: list[tuple[str, _Style, float]] = []
    for line in lines:
        while line and line[-1][0].isspace():
            line = line[:-1]
        if not line:
            continue
        if out:
            last, first = out[-1][0], line[0][0]
            if last == "-" and first.islower() and len(out) > 1 and out[-2][0].isalpha():
                out.pop()
            elif not (_CJK.match(last) and _CJK.match(first)):
                out.append((" ", out[-1][1], 0.0))
        out += line
    return out


def _block(box: LTTextBox) -> _Block | None:
    chars = _joined([_line_pieces(line) for line in box if isinstance(line, LTTextLine)])
    if not "".join(c for c, _, _ in chars).strip():
        return None
    weights = Counter[_Style]()
    for char, style, _ in chars:
        weights[style] += len(char)
    dominant = weights.most_common(1)[0][0]
    unit: UnitText[_Style] = UnitText(PROSE)
    for text, style in _spans(chars):
        core = text.strip()
        if style == dominant or not core:
            unit.add_text(text)
        else:  # spaces at a styled stretch's ends stay outside its tag
            unit.add_text(text[: len(text) - len(text.lstrip())])
            unit.open(style)
            unit.add_text(core)
            unit.close()
            unit.add_text(text[len(text.rstrip()) :])
    sizes = [size for _, _, size in chars if size]
    return _Block(unit.text, unit.markup, dominant, statistics.median(sizes) if sizes else 0.0, unit.translatable)


def _spans(chars: Iterable[tuple[str, _Style, float]]) -> list[tuple[str, _Style]]:
    spans: list[tuple[str, _Style]] = []
    for char, style, _ in chars:
        if spans and (spans[-1][1] == style or char.isspace()):
            spans[-1] = (spans[-1][0] + char, spans[-1][1])
        else:
            spans.append((char, style))
    return spans


def _read(data: bytes) -> list[_Page]:
    _check(data)
    try:
        layout: list[LTPage] = list(extract_pages(io.BytesIO(data), laparams=LAParams(), maxpages=MAX_PDF_PAGES))
    except (PDFException, PSException, ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise InvalidDocumentError(f"{NAME}: the file's pages cannot be read: {exc}", field="file") from exc
    pages = []
    for page in layout:
        blocks = [block for box in page if isinstance(box, LTTextBox) and (block := _block(box)) is not None]
        pages.append(_Page(page.width, page.height, tuple(blocks)))
    if not any(page.blocks for page in pages):
        raise InvalidDocumentError(f"{NAME}: the file has no text layer (a scanned document?); "
                                   "hymt reads the text of a PDF and does not run OCR", field="file")
    return _with_headings(pages)


def _with_headings(pages: list[_Page]) -> list[_Page]:
    """Blocks markedly larger than the body text become headings, the largest size level 1."""
    weights = Counter[float]()
    for page in pages:
        for block in page.blocks:
            weights[round(block.size * 2) / 2] += len(block.text)
    body = weights.most_common(1)[0][0] if weights else 0.0

    def is_heading(block: _Block) -> bool:
        return body > 0 and block.size >= body * HEADING_SIZE_RATIO and len(block.text) <= MAX_HEADING_CHARS

    sizes = sorted({round(b.size * 2) / 2 for page in pages for b in page.blocks if is_heading(b)}, reverse=True)
    out = []
    for page in pages:
        blocks = tuple(_Block(b.text, b.markup, b.style, b.size, b.unit,
                              min(sizes.index(round(b.size * 2) / 2) + 1, 3) if is_heading(b) else 0)
                       for b in page.blocks)
        out.append(_Page(page.width, page.height, blocks))
    return out


def _write_runs(paragraph: Paragraph, tree: Tree, markup: dict[int, _Style | Literal],
                style: _Style) -> None:
    for node in tree:
        if isinstance(node, str):
            _run(paragraph, node, style)
            continue
        tag = markup[node.number]
        if isinstance(tag, Literal):
            _run(paragraph, tag.open, style)
            _write_runs(paragraph, node.children, markup, style)
            _run(paragraph, tag.close, style)
        else:
            _write_runs(paragraph, node.children, markup, tag)


def _run(paragraph: Paragraph, text: str, style: _Style) -> None:
    if text:
        run = paragraph.add_run(text)
        run.bold = style.bold or None
        run.italic = style.italic or None


def _set_page(section: Section, page: _Page) -> None:
    section.orientation = WD_ORIENT.LANDSCAPE if page.width > page.height else WD_ORIENT.PORTRAIT
    section.page_width = Pt(page.width)
    section.page_height = Pt(page.height)


class PdfDocument(ParsedDocument):
    def __init__(self, data: bytes) -> None:
        self._pages = _read(data)
        units = []
        for number, page in enumerate(self._pages, start=1):
            count = 0
            for block in page.blocks:
                if block.unit:
                    count += 1
                    units.append(Unit(block.text, where=f"page {number} ¶{count}"))
        self._units = tuple(units)

    @property
    def units(self) -> tuple[Unit, ...]:
        return self._units

    def render(self, translations: Sequence[Tree]) -> bytes:
        document = docx.Document()
        for child in list(document.element.body):  # the template's empty paragraph
            if child.tag.endswith("}p"):
                document.element.body.remove(child)
        trees = iter(translations)
        for number, page in enumerate(self._pages):
            section = document.sections[0] if number == 0 else document.add_section(WD_SECTION.NEW_PAGE)
            _set_page(section, page)
            for block in page.blocks:
                tree: Tree = next(trees) if block.unit else _literal_tree(block)
                paragraph = document.add_heading(level=block.heading) if block.heading else document.add_paragraph()
                _write_runs(paragraph, tree, block.markup, block.style)
        out = io.BytesIO()
        document.save(out)
        return out.getvalue()


def _literal_tree(block: _Block) -> Tree:
    return parse_tree(block.text)


def parse(data: bytes) -> PdfDocument:
    return PdfDocument(data)


FORMAT = DocumentFormat(name=NAME, suffixes=(".pdf",), media_type=MEDIA_TYPE, parse=parse,
                        output_suffix=".docx", output_media_type=DOCX_MEDIA_TYPE)
