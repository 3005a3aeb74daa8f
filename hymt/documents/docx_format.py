"""Word documents (.docx) through python-docx's package and element tree.

Units: every paragraph with text of the body (tables, nested tables, content controls and text
boxes included, as they are paragraphs in the same XML), of every header and footer part
(first-page, even and default of every section), of the footnotes and of the endnotes, in
that order. Comments, the glossary and charts are left as they are. A paragraph is one unit;
its run formatting travels as tags (ooxml_paragraph.py, docx_paragraph.py).

python-docx models the main document, headers and footers as XML parts; footnotes and
endnotes it loads as opaque blobs unless told otherwise, so their content types are
registered as plain XML parts (python-docx's own extension point), which it then serialises
from the element tree like the others.
"""
from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Sequence

import docx
from docx.opc.constants import CONTENT_TYPE as CT
from docx.opc.exceptions import PackageNotFoundError
from docx.opc.part import PartFactory, XmlPart
from docx.oxml.ns import qn
from lxml import etree

from hymt.documents.docx_paragraph import WordDialect
from hymt.documents.ooxml_paragraph import PlacedParagraph, Story, read_stories, write_stories
from hymt.documents.safety import check_zip
from hymt.documents.units import DocumentFormat, ParsedDocument, Tree, Unit
from hymt.errors import InvalidDocumentError

NAME = "docx"
MEDIA_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"

PartFactory.part_type_for.setdefault(CT.WML_FOOTNOTES, XmlPart)
PartFactory.part_type_for.setdefault(CT.WML_ENDNOTES, XmlPart)

#: Parts translated, in the order their units come.
_STORY_TYPES = (CT.WML_DOCUMENT_MAIN, CT.WML_HEADER, CT.WML_FOOTER, CT.WML_FOOTNOTES, CT.WML_ENDNOTES)
_DIALECT = WordDialect()


def _open(data: bytes) -> docx.document.Document:
    check_zip(data, NAME)
    try:
        return docx.Document(io.BytesIO(data))
    except (PackageNotFoundError, ValueError, KeyError, zipfile.BadZipFile, etree.XMLSyntaxError) as exc:
        raise InvalidDocumentError(f"{NAME}: the file is not a readable Word document: {exc}", field="file") from exc


def _stories(document: docx.document.Document) -> list[Story]:
    parts = [part for part in document.part.package.iter_parts()
             if isinstance(part, XmlPart) and part.content_type in _STORY_TYPES]
    parts.sort(key=lambda part: (_STORY_TYPES.index(part.content_type), _natural(str(part.partname))))
    stories = []
    for part in parts:
        label = str(part.partname).rsplit("/", 1)[-1].removesuffix(".xml")
        stories.append(Story("body" if part.content_type == CT.WML_DOCUMENT_MAIN else label,
                             list(part.element.iter(qn("w:p")))))
    return stories


def _natural(name: str) -> tuple[str, int]:
    """header10 after header9."""
    match = re.fullmatch(r"(.*?)(\d*)\.xml", name)
    return (match.group(1), int(match.group(2) or 0)) if match else (name, 0)


class DocxDocument(ParsedDocument):
    def __init__(self, data: bytes) -> None:
        self._data = data
        self._units = self._read()[0]

    def _read(self) -> tuple[tuple[Unit, ...], list[PlacedParagraph], docx.document.Document]:
        document = _open(self._data)
        units, placed = read_stories(_stories(document), _DIALECT)
        return units, placed, document

    @property
    def units(self) -> tuple[Unit, ...]:
        return self._units

    def render(self, translations: Sequence[Tree]) -> bytes:
        # A fresh document each time: writing moves elements, and render may be called again.
        _, placed, document = self._read()
        write_stories(placed, translations, _DIALECT)
        out = io.BytesIO()
        document.save(out)
        return out.getvalue()


def parse(data: bytes) -> DocxDocument:
    return DocxDocument(data)


FORMAT = DocumentFormat(name=NAME, suffixes=(".docx",), media_type=MEDIA_TYPE, parse=parse)
