"""XML parts read with the exact byte range of every element, to change a few texts in place.

An EPUB's package document (OPF) and NCX need a handful of texts changed (a title, the table
of contents' labels, the language) and everything else kept byte for byte, which no
serialiser does. Expat reports where each event starts in the input (`CurrentByteIndex`), so
reading the part once gives each element's start tag and content as byte ranges; `splice`
then replaces just those ranges.

Read defused, as defusedxml's expat reader does: a DOCTYPE naming an external DTD is allowed
(NCX files carry one) but never loaded, and an entity declaration or a reference to an
external entity is an InvalidDocumentError, so neither "billion laughs" nor a file or network
read can happen. Predefined entities and character references are decoded as usual.
"""
from __future__ import annotations

import codecs
import re
import xml.parsers.expat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from hymt.errors import InvalidDocumentError

#: Expat reports names as "namespace local" with this separator; elements here use Clark
#: notation, "{namespace}local".
_SEPARATOR = " "
_DECLARED_ENCODING = re.compile(rb"""^<\?xml[^>]*?\sencoding\s*=\s*["']([A-Za-z][A-Za-z0-9._-]*)["']""")
_LANG_ATTRIBUTE = re.compile(r"""(\s(?:xml:)?lang\s*=\s*)("[^"]*"|'[^']*')""")


@dataclass(frozen=True)
class XmlElement:
    """One element of a part.

    Attributes:
        name: "{namespace}local" (or "local" outside a namespace).
        attributes: values by Clark name.
        tag: byte range of its start tag (of the whole element when it is self-closed).
        content: byte range between its start and end tags (empty when self-closed).
        text: the content's character data when the content is nothing else (no child
            element, comment, processing instruction or undeclared entity); None otherwise.
        line: the line its start tag is on.
        parent: the index of its parent in `SpannedXml.elements`, -1 for the root.
    """

    name: str
    attributes: Mapping[str, str]
    tag: tuple[int, int]
    content: tuple[int, int]
    text: str | None
    line: int
    parent: int


@dataclass(frozen=True)
class SpannedXml:
    """A part's bytes and its elements in document order."""

    data: bytes
    codec: str  # how text put into the part is encoded
    elements: tuple[XmlElement, ...]

    def encode(self, text: str) -> bytes:
        """`text` (already escaped for XML) in the part's encoding; characters it cannot hold
        as character references."""
        return text.encode(self.codec, errors="xmlcharrefreplace")

    def decode(self, span: tuple[int, int]) -> str:
        return self.data[span[0] : span[1]].decode(self.codec)


@dataclass
class _Open:
    name: str
    attributes: dict[str, str]
    start: int
    line: int
    parent: int
    tag_end: int = -1
    chunks: list[str] = field(default_factory=list)
    mixed: bool = False


class _Reader:
    def __init__(self, part: str) -> None:
        self.part = part
        self.parser = xml.parsers.expat.ParserCreate(namespace_separator=_SEPARATOR)
        self.found: list[XmlElement | None] = []
        self.stack: list[tuple[int, _Open]] = []
        self.pending: _Open | None = None  # an element whose start tag's end is not known yet
        p = self.parser
        p.StartElementHandler = self.start
        p.EndElementHandler = self.end
        p.CharacterDataHandler = self.characters
        p.CommentHandler = lambda _data: self.other()
        p.ProcessingInstructionHandler = lambda _target, _data: self.other()
        p.StartCdataSectionHandler = self.cdata
        p.SkippedEntityHandler = lambda _name, _is_parameter: self.other()
        p.EntityDeclHandler = self.refuse_entities
        p.UnparsedEntityDeclHandler = self.refuse_entities
        p.ExternalEntityRefHandler = self.refuse_external
        p.SetParamEntityParsing(xml.parsers.expat.XML_PARAM_ENTITY_PARSING_NEVER)

    def mark(self) -> None:
        if self.pending is not None:
            self.pending.tag_end = self.parser.CurrentByteIndex
            self.pending = None

    def start(self, name: str, attributes: dict[str, str]) -> None:
        self.mark()
        if self.stack:
            self.stack[-1][1].mixed = True
        element = _Open(_clark(name), {_clark(k): v for k, v in attributes.items()}, self.parser.CurrentByteIndex,
                        self.parser.CurrentLineNumber, self.stack[-1][0] if self.stack else -1)
        self.stack.append((len(self.found), element))
        self.found.append(None)
        self.pending = element

    def end(self, _name: str) -> None:
        self.mark()
        index, element = self.stack.pop()
        end = self.parser.CurrentByteIndex
        self_closed = end <= element.tag_end  # expat reports a self-closed element's end after its tag
        content = (element.tag_end, element.tag_end) if self_closed else (element.tag_end, end)
        text = None if element.mixed else "".join(element.chunks)
        self.found[index] = XmlElement(element.name, element.attributes, (element.start, element.tag_end), content,
                                       text, element.line, element.parent)

    def characters(self, data: str) -> None:
        self.mark()
        if self.stack:
            self.stack[-1][1].chunks.append(data)

    def cdata(self) -> None:
        self.mark()

    def other(self) -> None:
        self.mark()
        if self.stack:
            self.stack[-1][1].mixed = True

    def refuse_entities(self, *_args: object) -> None:
        raise InvalidDocumentError(f"{self.part} declares entities, which hymt refuses", field="file")

    def refuse_external(self, *_args: object) -> int:
        raise InvalidDocumentError(f"{self.part} refers to an external entity, which hymt refuses", field="file")


def _clark(name: str) -> str:
    namespace, _, local = name.rpartition(_SEPARATOR)
    return f"{{{namespace}}}{local}" if namespace else local


def read_spanned_xml(data: bytes, part: str) -> SpannedXml:
    """`data` read defused; `part` names it in errors ("epub OEBPS/content.opf")."""
    reader = _Reader(part)
    try:
        reader.parser.Parse(data, True)
    except xml.parsers.expat.ExpatError as exc:
        raise InvalidDocumentError(f"{part} is not well-formed XML: {exc}", field="file") from exc
    elements = tuple(element for element in reader.found if element is not None)
    return SpannedXml(data, xml_codec(data), elements)


def xml_codec(data: bytes) -> str:
    """The Python codec of an XML document's bytes: UTF-16 by its byte-order mark, else the
    encoding its declaration names (when Python knows it), else UTF-8. The codecs for UTF-16
    are the endian ones, which write no byte-order mark."""
    if data.startswith(codecs.BOM_UTF16_LE):
        return "utf-16-le"
    if data.startswith(codecs.BOM_UTF16_BE):
        return "utf-16-be"
    declared = _DECLARED_ENCODING.match(data.removeprefix(codecs.BOM_UTF8))
    if declared is None:
        return "utf-8"
    try:
        return codecs.lookup(declared.group(1).decode("ascii")).name
    except LookupError:
        return "utf-8"


def splice(data: bytes, edits: Sequence[tuple[tuple[int, int], bytes]]) -> bytes:
    """`data` with each byte range replaced; the ranges must not overlap."""
    parts: list[bytes] = []
    pos = 0
    for (start, end), replacement in sorted(edits, key=lambda edit: edit[0]):
        if start < pos:
            raise ValueError(f"overlapping edits at byte {start}")
        parts += [data[pos:start], replacement]
        pos = end
    parts.append(data[pos:])
    return b"".join(parts)


def escape_xml_text(text: str) -> str:
    """Text for element content."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def with_language(start_tag: str, language: str) -> str:
    """A start tag with the value of each `lang` and `xml:lang` attribute it has set to
    `language` (a BCP 47 tag); a tag without either is returned as it is."""
    return _LANG_ATTRIBUTE.sub(lambda m: f"{m.group(1)}{m.group(2)[0]}{language}{m.group(2)[0]}", start_tag)
