"""The entries of an EPUB that hold text to translate, each with its units and its writer.

- `ContentPart`: an XHTML content document (a chapter, the EPUB 3 navigation document), read
  by the HTML format, so the same rules apply as to .html files: inline markup as tags, alt
  and title attributes as units, `translate="no"` honoured. Everything but the translated
  text is the source's bytes, so XHTML stays well-formed: translated text is escaped for XML
  and tags (self-closed ones too) are written as they were.
- `XmlTextPart`: the package document (OPF) or the NCX, where a few elements' texts are
  units (the title, the description, the table of contents' labels) and the rest of the file
  is kept byte for byte (xml_spans.py). A description written as escaped HTML (as Calibre
  writes it) is read as HTML, its markup as tags.

A part renders to None when nothing in it changed, so its entry is copied as it was.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from hymt.documents import html
from hymt.documents.document_builder import DocumentBuilder, UnitPieces
from hymt.documents.html_tokens import tokenize
from hymt.documents.text_document import TextDocument
from hymt.documents.units import TagRules, Tree, Unit
from hymt.documents.xml_spans import SpannedXml, XmlElement, escape_xml_text, splice, with_language, xml_codec
from hymt.errors import InvalidDocumentError

_WORDS = re.compile(r"\s+|\S+")
_MARKUP = re.compile(r"<[A-Za-z/!]")
_HTML_START = re.compile(r"<html[\s/>]", re.IGNORECASE)


@dataclass(frozen=True)
class ContentPart:
    """An XHTML content document.

    Attributes:
        path: its entry name.
        parsed: the HTML format's reading of its text as UTF-8.
        units: the units of `parsed`, their places prefixed with `path`.
        utf8: what the HTML format read (the entry's bytes when they are UTF-8).
        codec: its encoding; "utf-8" when `utf8` is the entry itself.
        bom: the byte-order mark to put back before text re-encoded from another encoding.
        root_tag: (start, end) of the `<html>` start tag in `utf8` decoded; None if none.
    """

    path: str
    parsed: TextDocument
    units: tuple[Unit, ...]
    utf8: bytes
    codec: str
    bom: bytes
    root_tag: tuple[int, int] | None

    def render(self, trees: Sequence[Tree], language: str | None) -> bytes | None:
        out = self.parsed.render(trees)
        if out == self.utf8:
            return None
        text = out.decode("utf-8")
        if language and self.root_tag is not None:
            start, end = self.root_tag
            original = self.utf8.decode("utf-8")
            if text[:end] == original[:end]:  # nothing before or in the tag changed
                text = text[:start] + with_language(text[start:end], language) + text[end:]
        if self.codec == "utf-8":
            return text.encode("utf-8")
        return self.bom + text.encode(self.codec, errors="xmlcharrefreplace")


def read_content(path: str, data: bytes, rules: TagRules) -> ContentPart:
    """An XHTML content document in UTF-8, UTF-16 or the encoding its XML declaration names."""
    codec, bom = _encoding(data)
    try:
        utf8 = data if codec == "utf-8" else data[len(bom) :].decode(codec).encode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidDocumentError(f"epub: {path} is not valid {codec}: {exc}", field="file") from exc
    try:
        parsed = html.parse_with_rules(utf8, rules)
    except InvalidDocumentError as exc:
        raise InvalidDocumentError(f"epub: {path}: {exc}", field="file") from exc
    units = tuple(replace(unit, where=f"{path} {unit.where}") for unit in parsed.units)
    return ContentPart(path, parsed, units, utf8, codec, bom, _root_tag(utf8.decode("utf-8")))


def _root_tag(text: str) -> tuple[int, int] | None:
    """Where the `<html>` start tag is: the first `<html` the tokenizer reads as that tag
    (not inside a comment). Only the text up to it is tokenized, as the whole document was
    read once already."""
    found = _HTML_START.search(text)
    if found is None:
        return None
    end = text.find(">", found.start()) + 1
    tokens = tokenize(text[:end]) if end else []
    last = tokens[-1] if tokens else None
    if last is None or last.kind not in ("start", "startend") or last.tag != "html" or last.start != found.start():
        return None
    return last.start, last.end


def _encoding(data: bytes) -> tuple[str, bytes]:
    """(codec, byte-order mark to write back) of an XHTML document. A UTF-8 BOM stays part of
    the text (the HTML format keeps it); a UTF-16 one is put back before the re-encoded text."""
    codec = xml_codec(data)
    return codec, data[:2] if codec.startswith("utf-16") else b""


@dataclass(frozen=True)
class _ElementText:
    """One element's text as a document of its own: its units (labelled with the part and
    line), and `source`, what the document renders when nothing is translated."""

    element: XmlElement
    document: TextDocument
    units: tuple[Unit, ...]
    source: str


@dataclass(frozen=True)
class XmlTextPart:
    """The OPF or the NCX: some elements' texts translated, the language set in place.

    Attributes:
        path: its entry name.
        xml: the part read with byte ranges.
        texts: the elements translated, in document order.
        language: the element whose text becomes the target language (the OPF's first
            dc:language); None in the NCX.
    """

    path: str
    xml: SpannedXml
    texts: tuple[_ElementText, ...]
    language: XmlElement | None

    @property
    def units(self) -> tuple[Unit, ...]:
        return tuple(unit for text in self.texts for unit in text.units)

    def render(self, trees: Sequence[Tree], language: str | None) -> bytes | None:
        edits: list[tuple[tuple[int, int], bytes]] = []
        changed: list[XmlElement] = []
        start = 0
        for text in self.texts:
            count = len(text.units)
            rendered = text.document.render(trees[start : start + count]).decode("utf-8")
            start += count
            if rendered != text.source:
                edits.append((text.element.content, self.xml.encode(escape_xml_text(rendered))))
                changed.append(text.element)
        if language and self.language is not None and (self.language.text or "").strip() != language:
            edits.append((self.language.content, self.xml.encode(language)))
        if not edits:
            return None
        if language:
            root = self.xml.elements[0]
            for element in [root, *(e for e in changed if e is not root)]:
                tag = self.xml.decode(element.tag)
                if (relabelled := with_language(tag, language)) != tag:
                    edits.append((element.tag, self.xml.encode(relabelled)))
        return splice(self.xml.data, edits)


def read_xml_texts(path: str, xml: SpannedXml, elements: Sequence[XmlElement], language: XmlElement | None,
                   *, split: frozenset[str]) -> XmlTextPart:
    """A part whose `elements`' texts are units; those named in `split` may be split into
    sentences (a description), the others are one request each (a title, a label)."""
    texts = []
    for element in elements:
        label = element.name.rpartition("}")[2]
        document = _text_document(element.text or "", element.name in split)
        units = tuple(replace(unit, where=f"{path} <{label}>, line {element.line}") for unit in document.units)
        if units:
            texts.append(_ElementText(element, document, units, element.text or ""))
    return XmlTextPart(path, xml, tuple(texts), language)


def _text_document(text: str, split: bool) -> TextDocument:
    """`text` as units: HTML (an escaped HTML description) when it has markup, else one unit
    with its whitespace runs read as one space. Renders to text still to be escaped for XML."""
    builder = DocumentBuilder(text)
    if _MARKUP.search(text):
        html.add_html(builder, text)
    else:
        pieces = UnitPieces()
        for match in _WORDS.finditer(text):
            word = match.group(0)
            pieces.text(" " if word.isspace() else word, word)
        builder.literal(builder.place(pieces.pieces, offset=0, escape=_as_is, label="", split=split))
    return builder.build(bom=False)


def _as_is(text: str, at_start: bool = False, at_end: bool = False) -> str:
    return text

