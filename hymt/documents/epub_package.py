"""What an EPUB holds, as its own files say: the container, the package document and DRM.

`META-INF/container.xml` names the package document (the OPF). Its manifest lists every
resource with a media type, its spine the reading order, and its metadata the book's title,
description and language. Paths in the OPF are URLs relative to the OPF's folder; they are
resolved to entry names of the archive (never to a filesystem path), and one that leaves the
archive's root or names another host is ignored. `META-INF/encryption.xml` lists encrypted
entries: font obfuscation (the IDPF and Adobe algorithms, which only scramble a font's first
bytes with a key from the book's identifier) is allowed, anything else is DRM.
"""
from __future__ import annotations

import posixpath
from collections.abc import Callable, Collection
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from hymt.documents.xml_spans import SpannedXml, XmlElement, read_spanned_xml
from hymt.errors import InvalidDocumentError

NAME = "epub"
MEDIA_TYPE = "application/epub+zip"
MIMETYPE_ENTRY = "mimetype"
CONTAINER_ENTRY = "META-INF/container.xml"
ENCRYPTION_ENTRY = "META-INF/encryption.xml"

#: Manifest media types of the documents translated as XHTML (text/html is not allowed by the
#: specification but found in the wild).
CONTENT_MEDIA_TYPES = frozenset({"application/xhtml+xml", "text/html"})
NCX_MEDIA_TYPE = "application/x-dtbncx+xml"
#: Encryption algorithms that obfuscate fonts rather than protect the book.
FONT_OBFUSCATION = frozenset({"http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC"})

_CONTAINER = "{urn:oasis:names:tc:opendocument:xmlns:container}"
_OPF = "{http://www.idpf.org/2007/opf}"
_DC = "{http://purl.org/dc/elements/1.1/}"
_ENC = "{http://www.w3.org/2001/04/xmlenc#}"
_OPF_MEDIA_TYPE = "application/oebps-package+xml"
#: Dublin Core elements whose text is translated. Subjects are not: they are mostly terms of
#: a controlled vocabulary (BISAC, Library of Congress headings) that stores match as written.
TRANSLATED_METADATA = (f"{_DC}title", f"{_DC}description")

#: Reads an entry of the archive by name.
ReadEntry = Callable[[str], bytes]


@dataclass(frozen=True)
class Package:
    """The package document and what it names.

    Attributes:
        path: the OPF's entry name.
        opf: the OPF read with byte ranges.
        metadata: the dc:title and dc:description elements with text, in document order.
        language: the first dc:language element (the book's main language), None if none.
        content: entry names of the XHTML content documents: the spine's, in reading order,
            then the manifest's others (the EPUB 3 navigation document, notes) in its order.
        ncx: the NCX's entry name, "" when the book has none.
    """

    path: str
    opf: SpannedXml
    metadata: tuple[XmlElement, ...]
    language: XmlElement | None
    content: tuple[str, ...]
    ncx: str


def package_path(read: ReadEntry, names: Collection[str]) -> str:
    """The OPF's entry name, from the container."""
    if CONTAINER_ENTRY not in names:
        raise InvalidDocumentError(f"{NAME}: the file is not an EPUB: it has no {CONTAINER_ENTRY}", field="file")
    container = read_spanned_xml(read(CONTAINER_ENTRY), f"{NAME} {CONTAINER_ENTRY}")
    rootfiles = [e for e in container.elements if e.name == f"{_CONTAINER}rootfile"]
    paths = [e.attributes.get("full-path", "") for e in rootfiles
             if e.attributes.get("media-type", _OPF_MEDIA_TYPE) == _OPF_MEDIA_TYPE]
    path = _resolve("", paths[0]) if paths else None
    if path is None or path not in names:
        raise InvalidDocumentError(
            f"{NAME}: {CONTAINER_ENTRY} names no package document (OPF) found in the file", field="file"
        )
    return path


def encrypted_entries(read: ReadEntry, names: Collection[str]) -> frozenset[str]:
    """The entries `META-INF/encryption.xml` lists (all obfuscated fonts); a book with any
    other encryption is protected by DRM and refused."""
    if ENCRYPTION_ENTRY not in names:
        return frozenset()
    encryption = read_spanned_xml(read(ENCRYPTION_ENTRY), f"{NAME} {ENCRYPTION_ENTRY}")
    listed: list[tuple[str, str]] = []  # (algorithm, entry) of each EncryptedData, in order
    for element in encryption.elements:
        if element.name == f"{_ENC}EncryptedData":
            listed.append(("", ""))
        elif element.name == f"{_ENC}EncryptionMethod" and listed:
            listed[-1] = (element.attributes.get("Algorithm", ""), listed[-1][1])
        elif element.name == f"{_ENC}CipherReference" and listed:
            listed[-1] = (listed[-1][0], _resolve("", element.attributes.get("URI", "")) or "")
    protected = [entry or "?" for algorithm, entry in listed if algorithm not in FONT_OBFUSCATION]
    if protected:
        shown = ", ".join(protected[:3]) + (", ..." if len(protected) > 3 else "")
        raise InvalidDocumentError(
            f"{NAME}: the book is protected by DRM: {ENCRYPTION_ENTRY} encrypts {len(protected)} entries ({shown}); "
            "hymt translates only books without DRM",
            field="file",
        )
    return frozenset(entry for _, entry in listed if entry)


def read_package(path: str, read: ReadEntry, names: Collection[str]) -> Package:
    """The package document at `path` and the documents it names that the archive holds."""
    opf = read_spanned_xml(read(path), f"{NAME} {path}")
    if not opf.elements or opf.elements[0].name != f"{_OPF}package":
        raise InvalidDocumentError(f"{NAME}: {path} is not an OPF package document", field="file")
    folder = posixpath.dirname(path)
    items: dict[str, tuple[str, str]] = {}  # manifest id -> (entry name, media type)
    spine: list[str] = []
    toc = ""
    for element in opf.elements:
        attributes = element.attributes
        if element.name == f"{_OPF}item":
            entry = _resolve(folder, attributes.get("href", ""))
            if entry is not None and entry in names:
                items.setdefault(attributes.get("id", ""), (entry, attributes.get("media-type", "").strip().lower()))
        elif element.name == f"{_OPF}itemref":
            spine.append(attributes.get("idref", ""))
        elif element.name == f"{_OPF}spine":
            toc = attributes.get("toc", "")
    content: dict[str, None] = {}  # an ordered set
    for item_id in [*spine, *items]:
        entry, media_type = items.get(item_id, ("", ""))
        if media_type in CONTENT_MEDIA_TYPES:
            content.setdefault(entry)
    ncx = items[toc][0] if toc in items and items[toc][1] == NCX_MEDIA_TYPE else ""
    if not ncx:
        ncx = next((entry for entry, media_type in items.values() if media_type == NCX_MEDIA_TYPE), "")
    metadata = tuple(e for e in opf.elements if e.name in TRANSLATED_METADATA and e.text and e.text.strip())
    language = next((e for e in opf.elements if e.name == f"{_DC}language"), None)
    return Package(path, opf, metadata, language, tuple(content), ncx)


def _resolve(folder: str, href: str) -> str | None:
    """The entry name a relative URL names from `folder`; None for another host's URL, a
    path from the root, or one that leaves the archive."""
    url = urlsplit(href.strip())
    if url.scheme or url.netloc or not url.path or url.path.startswith("/"):
        return None
    entry = posixpath.normpath(posixpath.join(folder, unquote(url.path)))
    if entry == ".." or entry.startswith("../"):
        return None
    return entry
