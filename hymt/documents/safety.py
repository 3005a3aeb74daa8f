"""What a document from anyone must pass before a library opens it: the limits on zip
containers (DOCX, PPTX, XLSX), PDFs and JSON/YAML trees, and the defused XML parser (XLIFF,
and a check of every XML part inside a zip).

Every limit is here, so one place says how much a request may make hymt unpack or read. A
file over a limit, a corrupt or encrypted one, is an InvalidDocumentError naming its format.

Why these checks and not a library's: the Office libraries open any zip they are given and
decompress parts on demand. A zip's declared sizes bound what Python's zipfile will produce
(it stops at the declared size and fails the CRC check past it), so the sum of declared sizes
and the ratio to the compressed sizes are an honest measure before anything is inflated.
Office XML never carries a DOCTYPE, so a part that has one is refused outright: that shuts
out entity expansion ("billion laughs") and external entities whatever parser reads it later.
Entry names are only ever looked up inside the archive, never joined to a filesystem path;
names with `..`, a drive or a leading slash are refused anyway, as no valid package has them.
"""
from __future__ import annotations

import io
import re
import zipfile

from lxml import etree

from hymt.errors import InvalidDocumentError

#: The largest document accepted, in bytes, before anything is unpacked.
MAX_DOCUMENT_BYTES = 100 * 1024 * 1024
#: The most entries a zip container may have.
MAX_ZIP_ENTRIES = 10_000
#: The most bytes all entries of a zip container may unpack to.
MAX_UNCOMPRESSED_BYTES = 500 * 1024 * 1024
#: The highest ratio of an entry's unpacked to packed size (XML compresses 10-30x; a bomb
#: reaches 1000x). Entries under `RATIO_FREE_BYTES` unpacked are not checked.
MAX_COMPRESSION_RATIO = 200
RATIO_FREE_BYTES = 1024 * 1024
#: The most pages of a PDF read.
MAX_PDF_PAGES = 2_000
#: The most values and containers a JSON or YAML file may hold (a YAML file of aliases can
#: name the same container many times over: each is walked once).
MAX_NODES = 1_000_000

#: The start of an OLE compound file: legacy .doc/.xls/.ppt, and Office files encrypted with
#: a password (those are an OLE container around the encrypted package).
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_DOCTYPE = re.compile(rb"<!DOCTYPE|<!ENTITY", re.IGNORECASE)
_XML_SUFFIXES = (".xml", ".rels", ".vml")
_SCAN_CHUNK = 1024 * 1024


def check_size(data: bytes, format_name: str) -> None:
    """Refuse a document over MAX_DOCUMENT_BYTES or an empty one."""
    if not data:
        raise InvalidDocumentError(f"{format_name}: the file is empty", field="file")
    if len(data) > MAX_DOCUMENT_BYTES:
        raise InvalidDocumentError(
            f"{format_name}: the file has {len(data)} bytes, more than the limit of {MAX_DOCUMENT_BYTES}",
            field="file",
        )


def check_zip(data: bytes, format_name: str) -> None:
    """Refuse a zip container hymt should not open: not a zip (or an encrypted Office file),
    too many entries, too large unpacked, a bomb's compression ratio, an encrypted entry, an
    entry name that would escape a folder, or an XML part with a DOCTYPE."""
    check_size(data, format_name)
    if data.startswith(_OLE_MAGIC):
        raise InvalidDocumentError(
            f"{format_name}: the file is password-protected (encrypted) or a legacy binary Office file; "
            f"save it unencrypted as {format_name.upper()}",
            field="file",
        )
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise InvalidDocumentError(f"{format_name}: the file is not a valid {format_name.upper()} (zip) file: {exc}",
                                   field="file") from exc
    with archive:
        entries = archive.infolist()
        _check_entries(entries, format_name)
        for entry in entries:
            if entry.filename.lower().endswith(_XML_SUFFIXES):
                _scan_xml_entry(archive, entry, format_name)


def _check_entries(entries: list[zipfile.ZipInfo], format_name: str) -> None:
    if len(entries) > MAX_ZIP_ENTRIES:
        raise InvalidDocumentError(
            f"{format_name}: the file has {len(entries)} zip entries, more than the limit of {MAX_ZIP_ENTRIES}",
            field="file",
        )
    total = 0
    for entry in entries:
        _check_entry_name(entry.filename, format_name)
        if entry.flag_bits & 0x1:
            raise InvalidDocumentError(f"{format_name}: zip entry {entry.filename!r} is encrypted", field="file")
        total += entry.file_size
        if total > MAX_UNCOMPRESSED_BYTES:
            raise InvalidDocumentError(
                f"{format_name}: the file unpacks to more than the limit of {MAX_UNCOMPRESSED_BYTES} bytes",
                field="file",
            )
        ratio = entry.file_size // max(entry.compress_size, 1)
        if entry.file_size > RATIO_FREE_BYTES and ratio > MAX_COMPRESSION_RATIO:
            raise InvalidDocumentError(
                f"{format_name}: zip entry {entry.filename!r} is compressed {ratio}x, "
                f"more than the limit of {MAX_COMPRESSION_RATIO}x (a zip bomb?)",
                field="file",
            )


def _check_entry_name(name: str, format_name: str) -> None:
    parts = name.replace("\\", "/").split("/")
    if name.startswith(("/", "\\")) or ".." in parts or re.match(r"^[A-Za-z]:", name) or "\x00" in name:
        raise InvalidDocumentError(f"{format_name}: zip entry name {name!r} points outside the package",
                                   field="file")


def _scan_xml_entry(archive: zipfile.ZipFile, entry: zipfile.ZipInfo, format_name: str) -> None:
    """Refuse a part with a DOCTYPE or ENTITY declaration, reading it in chunks (a
    declaration split across two chunks is caught by the overlap)."""
    tail = b""
    try:
        with archive.open(entry) as stream:
            while chunk := stream.read(_SCAN_CHUNK):
                if _DOCTYPE.search(tail + chunk):
                    raise InvalidDocumentError(
                        f"{format_name}: part {entry.filename!r} declares a DOCTYPE or entities, "
                        "which Office files never do",
                        field="file",
                    )
                tail = chunk[-16:]
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:  # CRC or inflate errors
        raise InvalidDocumentError(f"{format_name}: zip entry {entry.filename!r} is corrupt: {exc}",
                                   field="file") from exc


def safe_xml_parser() -> etree.XMLParser:
    """An lxml parser that expands no entity, loads no DTD and reaches no network."""
    return etree.XMLParser(resolve_entities=False, load_dtd=False, no_network=True, huge_tree=False,
                           remove_comments=False, remove_pis=False)


def parse_xml(data: bytes, format_name: str) -> etree._ElementTree:
    """`data` parsed defused; malformed XML or a DOCTYPE (whatever it declares) is refused.
    The parser expands no entity (libxml2 also stops runaway amplification on its own), so a
    declaration costs nothing before it is refused."""
    check_size(data, format_name)
    try:
        tree = etree.parse(io.BytesIO(data), safe_xml_parser())
    except etree.XMLSyntaxError as exc:
        raise InvalidDocumentError(f"{format_name}: the file is not well-formed XML: {exc}", field="file") from exc
    if tree.docinfo.doctype or tree.docinfo.internalDTD is not None:
        raise InvalidDocumentError(f"{format_name}: the file declares a DOCTYPE or entities, which hymt refuses",
                                   field="file")
    return tree
