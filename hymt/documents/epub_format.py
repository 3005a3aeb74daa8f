"""EPUB 2 and 3 e-books: the same book back, its text translated and nothing else changed.

An EPUB is a zip of XHTML, CSS, images, fonts and a few XML files that describe the book
(epub_package.py). The units, in this order:

- the package document's dc:title and dc:description (dc:language becomes the target
  language in `render_for`; identifiers, dates, creators, subjects and the rest stay);
- the NCX's book title and every navLabel (the EPUB 2 table of contents);
- every XHTML content document the manifest lists, the spine's in reading order first, read
  by the HTML format (the EPUB 3 navigation document among them: its link texts are units).

The archive is written anew with Python's zipfile (no library copies compressed entries as
they are): `mimetype` first and stored, as the EPUB specification requires, then every other
entry in its order, with its name, date, compression method, permissions and comment. An
entry without translated text keeps its exact bytes; one with translated text differs only
in that text (and, in `render_for`, its `lang` attributes).

Safety: the archive passes safety.check_zip (entry count, unpacked size, compression ratio,
names that would leave a folder, encrypted entries) and every entry is read once to check
it; nothing is written to disk. The OPF, the NCX and the META-INF files are read by a
defused expat reader (xml_spans.py); XHTML is read by html.parser, which expands no
entities. A book with DRM (META-INF/encryption.xml encrypting anything but fonts) is
refused.
"""
from __future__ import annotations

import io
import re
import zipfile
import zlib
from collections.abc import Sequence

from hymt.documents.epub_package import (
    MEDIA_TYPE,
    MIMETYPE_ENTRY,
    NAME,
    Package,
    encrypted_entries,
    package_path,
    read_package,
)
from hymt.documents.epub_parts import ContentPart, XmlTextPart, read_content, read_xml_texts
from hymt.documents.safety import check_zip
from hymt.documents.units import DocumentFormat, LabelledDocument, Node, TagNode, TagRules, Tree, Unit
from hymt.documents.xml_spans import read_spanned_xml
from hymt.errors import InvalidDocumentError, InvalidInputError

_NCX = "{http://www.daisy.org/z3986/2005/ncx/}"
#: NCX elements whose `text` child is translated: the book's title and every entry's label
#: (table of contents, page list, other lists). The author (docAuthor) is not.
_NCX_LABELS = (f"{_NCX}docTitle", f"{_NCX}navLabel")
_DESCRIPTION = "{http://purl.org/dc/elements/1.1/}description"
_CHUNK = 1024 * 1024
#: Characters XML 1.0 cannot hold: C0 controls but tab and line breaks, lone surrogates,
#: U+FFFE and U+FFFF.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")

Part = ContentPart | XmlTextPart


class EpubDocument(LabelledDocument):
    def __init__(self, data: bytes, rules: TagRules) -> None:
        check_zip(data, NAME)
        self._data = data
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            entries = archive.infolist()
            _check_entries(archive, entries)
            self._parts = _read_parts(archive, {entry.filename for entry in entries}, rules)
        self._units = tuple(unit for part in self._parts for unit in part.units)

    @property
    def units(self) -> tuple[Unit, ...]:
        return self._units

    def _render(self, translations: Sequence[Tree], language: str | None) -> bytes:
        if len(translations) != len(self._units):
            raise InvalidInputError(
                f"expected {len(self._units)} translations (one per unit), got {len(translations)}",
                field="translations",
            )
        changed: dict[str, bytes] = {}
        start = 0
        for part in self._parts:
            trees = [_xml_safe(tree) for tree in translations[start : start + len(part.units)]]
            start += len(part.units)
            rendered = part.render(trees, language)
            if rendered is not None:
                changed[part.path] = rendered
        return _write_archive(self._data, changed)


def _check_entries(archive: zipfile.ZipFile, entries: list[zipfile.ZipInfo]) -> None:
    """Refuse duplicate names, a wrong `mimetype` and an entry that cannot be read back (a
    CRC error, an unsupported compression method)."""
    seen: set[str] = set()
    for entry in entries:
        if entry.filename in seen:
            raise InvalidDocumentError(f"{NAME}: zip entry {entry.filename!r} appears twice", field="file")
        seen.add(entry.filename)
        try:
            with archive.open(entry) as stream:
                first = stream.read(_CHUNK)
                while stream.read(_CHUNK):
                    pass
        except (zipfile.BadZipFile, NotImplementedError, zlib.error, EOFError, OSError, ValueError) as exc:
            raise InvalidDocumentError(f"{NAME}: zip entry {entry.filename!r} cannot be read: {exc}",
                                       field="file") from exc
        if entry.filename == MIMETYPE_ENTRY and first.strip() != MEDIA_TYPE.encode("ascii"):
            raise InvalidDocumentError(
                f"{NAME}: the file is not an EPUB: its mimetype entry says {first[:60]!r}, not {MEDIA_TYPE!r}",
                field="file",
            )


def _read_parts(archive: zipfile.ZipFile, names: set[str], rules: TagRules) -> list[Part]:
    def read(name: str) -> bytes:
        return archive.read(name)

    opf_path = package_path(read, names)
    encrypted = encrypted_entries(read, names)
    _refuse_encrypted([opf_path], encrypted)
    package = read_package(opf_path, read, names)
    _refuse_encrypted([package.ncx, *package.content], encrypted)
    parts: list[Part] = [_metadata_part(package)]
    if package.ncx:
        parts.append(_ncx_part(package.ncx, read(package.ncx)))
    parts.extend(read_content(path, read(path), rules) for path in package.content)
    return parts


def _refuse_encrypted(needed: list[str], encrypted: frozenset[str]) -> None:
    """Entries hymt must read cannot be obfuscated (only fonts may be)."""
    if locked := [name for name in needed if name in encrypted]:
        raise InvalidDocumentError(f"{NAME}: {locked[0]} is encrypted (META-INF/encryption.xml); "
                                   "hymt cannot read it", field="file")


def _metadata_part(package: Package) -> XmlTextPart:
    return read_xml_texts(package.path, package.opf, package.metadata, package.language,
                          split=frozenset({_DESCRIPTION}))


def _ncx_part(path: str, data: bytes) -> XmlTextPart:
    ncx = read_spanned_xml(data, f"{NAME} {path}")
    holders = {index for index, element in enumerate(ncx.elements) if element.name in _NCX_LABELS}
    labels = [e for e in ncx.elements if e.name == f"{_NCX}text" and e.parent in holders and e.text and e.text.strip()]
    return read_xml_texts(path, ncx, labels, None, split=frozenset())


def _write_archive(data: bytes, changed: dict[str, bytes]) -> bytes:
    """The archive with the `changed` entries' new bytes: `mimetype` first and stored (written
    when the input lacks it), then every other entry in its order, as it was."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w") as target:
        entries = source.infolist()
        mimetype = next((entry for entry in entries if entry.filename == MIMETYPE_ENTRY), None)
        info = zipfile.ZipInfo(MIMETYPE_ENTRY, mimetype.date_time if mimetype else (1980, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_STORED  # no extra field, no data descriptor: readers sniff it
        target.writestr(info, MEDIA_TYPE.encode("ascii"))
        for entry in entries:
            if entry.filename == MIMETYPE_ENTRY:
                continue
            content = changed[entry.filename] if entry.filename in changed else source.read(entry)
            target.writestr(_copied_info(entry), content)
        target.comment = source.comment
    return out.getvalue()


def _copied_info(entry: zipfile.ZipInfo) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(entry.filename, entry.date_time)
    info.compress_type = entry.compress_type
    info.comment = entry.comment
    info.external_attr = entry.external_attr
    info.create_system = entry.create_system
    return info


def _xml_safe(tree: Tree) -> Tree:
    """The tree without characters XML 1.0 cannot hold, should a translation bring any."""
    out: list[Node] = []
    for node in tree:
        if isinstance(node, str):
            out.append(_NOT_XML.sub("", node))
        else:
            out.append(TagNode(node.number, _xml_safe(node.children), node.void))
    return tuple(out)


def parse_with_rules(data: bytes, rules: TagRules) -> EpubDocument:
    """`data` read with DeepL-style element rules applied to its XHTML documents."""
    return EpubDocument(data, rules)


def parse(data: bytes) -> EpubDocument:
    return EpubDocument(data, TagRules())


FORMAT = DocumentFormat(name=NAME, suffixes=(".epub",), media_type=MEDIA_TYPE, parse=parse,
                        parse_with_rules=parse_with_rules)
