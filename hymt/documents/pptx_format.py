"""PowerPoint presentations (.pptx) through python-pptx's slides and element tree.

Units: every DrawingML paragraph (`a:p`) with text on every slide, in the order of the slide's
shape tree (text boxes, placeholders, shapes in groups at any depth, table cells), then the
slide's notes when it has a notes page. Slide layouts and masters (their prompt texts),
charts and SmartArt (parts of their own) are left as they are. A paragraph is one unit; run
formatting travels as tags (ooxml_paragraph.py): a DrawingML run holds one text, a line break
(`a:br`) and a field (`a:fld`: slide number, date) are opaque, the end-of-paragraph
properties stay last. A hyperlink is part of its run's properties, so it travels as the run's
formatting tag.
"""
from __future__ import annotations

import copy
import io
import zipfile
from collections.abc import Sequence

import pptx
from lxml import etree
from pptx.exc import PackageNotFoundError
from pptx.oxml.ns import qn

from hymt.documents.ooxml_paragraph import (
    Dialect,
    Element,
    Item,
    Opaque,
    PlacedParagraph,
    Story,
    TextRun,
    props_key,
    read_stories,
    write_stories,
)
from hymt.documents.safety import check_zip
from hymt.documents.units import DocumentFormat, ParsedDocument, Tree, Unit
from hymt.errors import InvalidDocumentError

NAME = "pptx"
MEDIA_TYPE = "application/vnd.openxmlformats-officedocument.presentationml.presentation"

#: Run attributes that do not change how text looks: spell-check state, the language tag.
_IGNORED_ATTRIBUTES = frozenset(("lang", "altLang", "dirty", "err", "noProof", "smtClean", "smtId"))
_IGNORED_PROPS: frozenset[str] = frozenset()


class DrawingDialect(Dialect):
    def head(self, paragraph: Element) -> list[Element]:
        return [child for child in paragraph if child.tag == qn("a:pPr")]

    def items(self, paragraph: Element) -> list[Item]:
        items: list[Item] = []
        for child in paragraph:
            if child.tag == qn("a:pPr"):
                continue
            props = child.find(qn("a:rPr")) if isinstance(child.tag, str) else None
            if child.tag == qn("a:r"):
                text = "".join(t.text or "" for t in child.iter(qn("a:t")))
                items.append(TextRun(text, props, _key(props), [child]))
            elif child.tag in (qn("a:br"), qn("a:fld")):
                items.append(Opaque([child], _key(props)))
            else:
                items.append(Opaque([child]))
        return items

    def make_runs(self, parent: Element, text: str, props: Element | None) -> list[Element]:
        out: list[Element] = []
        for index, line in enumerate(text.split("\n")):
            if index:
                out.append(self._element(parent, "a:br", props))
            if line:
                run = self._element(parent, "a:r", props)
                t = run.makeelement(qn("a:t"), nsmap=None)
                t.text = line
                run.append(t)
                out.append(run)
        return out

    @staticmethod
    def _element(parent: Element, tag: str, props: Element | None) -> Element:
        element = parent.makeelement(qn(tag), nsmap=None)
        if props is not None:
            element.append(copy.deepcopy(props))
        return element


def _key(props: Element | None) -> str:
    return props_key(props, _IGNORED_ATTRIBUTES, _IGNORED_PROPS)


_DIALECT = DrawingDialect()


def _open(data: bytes) -> pptx.presentation.Presentation:
    check_zip(data, NAME)
    try:
        return pptx.Presentation(io.BytesIO(data))
    except (PackageNotFoundError, ValueError, KeyError, zipfile.BadZipFile, etree.XMLSyntaxError) as exc:
        raise InvalidDocumentError(f"{NAME}: the file is not a readable PowerPoint presentation: {exc}",
                                   field="file") from exc


def _stories(presentation: pptx.presentation.Presentation) -> list[Story]:
    stories = []
    for number, slide in enumerate(presentation.slides, start=1):
        stories.append(Story(f"slide {number}", list(slide.element.iter(qn("a:p")))))
        if slide.has_notes_slide:
            stories.append(Story(f"slide {number} notes", list(slide.notes_slide.element.iter(qn("a:p")))))
    return stories


class PptxDocument(ParsedDocument):
    def __init__(self, data: bytes) -> None:
        self._data = data
        self._units = self._read()[0]

    def _read(self) -> tuple[tuple[Unit, ...], list[PlacedParagraph], pptx.presentation.Presentation]:
        presentation = _open(self._data)
        units, placed = read_stories(_stories(presentation), _DIALECT)
        return units, placed, presentation

    @property
    def units(self) -> tuple[Unit, ...]:
        return self._units

    def render(self, translations: Sequence[Tree]) -> bytes:
        _, placed, presentation = self._read()
        write_stories(placed, translations, _DIALECT)
        out = io.BytesIO()
        presentation.save(out)
        return out.getvalue()


def parse(data: bytes) -> PptxDocument:
    return PptxDocument(data)


FORMAT = DocumentFormat(name=NAME, suffixes=(".pptx",), media_type=MEDIA_TYPE, parse=parse)
