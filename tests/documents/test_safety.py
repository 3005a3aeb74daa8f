"""Files from anyone: zip bombs, entries that escape the package, entity expansion, encrypted
and corrupt files are refused with InvalidDocumentError naming the format."""
from __future__ import annotations

import io
import zipfile

import docx
import pytest

from hymt.documents import docx_format, pptx_format, xlsx_format
from hymt.documents.safety import MAX_COMPRESSION_RATIO, MAX_ZIP_ENTRIES, check_zip, parse_xml
from hymt.errors import InvalidDocumentError

BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r>
<w:t>&lol3;</w:t></w:r></w:p></w:body></w:document>"""


def _docx() -> bytes:
    document = docx.Document()
    document.add_paragraph("Hello")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _rewrite(data: bytes, replace: dict[str, bytes] | None = None, add: dict[str, bytes] | None = None) -> bytes:
    """A copy of the zip `data` with some entries replaced or added."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for entry in source.infolist():
            target.writestr(entry.filename, (replace or {}).get(entry.filename, source.read(entry)))
        for name, content in (add or {}).items():
            target.writestr(name, content)
    return out.getvalue()


def test_a_plain_document_passes():
    check_zip(_docx(), "docx")


def test_entity_expansion_inside_a_docx_part_is_refused():
    with pytest.raises(InvalidDocumentError, match="docx: part 'word/document.xml' declares a DOCTYPE"):
        docx_format.parse(_rewrite(_docx(), replace={"word/document.xml": BILLION_LAUGHS}))


def test_a_zip_bomb_is_refused():
    bomb = _rewrite(_docx(), add={"word/media/zeros.bin": bytes(4 * 1024 * 1024)})
    with pytest.raises(InvalidDocumentError, match=f"pptx: .*more than the limit of {MAX_COMPRESSION_RATIO}x"):
        pptx_format.parse(bomb)


@pytest.mark.parametrize("name", ["../evil.xml", "/etc/passwd", "word/../../evil.txt", "C:/evil.txt",
                                  "..\\evil.txt"])
def test_entry_names_that_leave_the_package_are_refused(name):
    with pytest.raises(InvalidDocumentError, match="points outside the package"):
        xlsx_format.parse(_rewrite(_docx(), add={name: b"x"}))


def test_too_many_entries_are_refused():
    many = _rewrite(_docx(), add={f"junk/{n}.txt": b"" for n in range(MAX_ZIP_ENTRIES)})
    with pytest.raises(InvalidDocumentError, match="zip entries, more than the limit"):
        docx_format.parse(many)


def test_an_encrypted_office_file_is_refused():
    ole = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(512)
    with pytest.raises(InvalidDocumentError, match="docx: the file is password-protected"):
        docx_format.parse(ole)


@pytest.mark.parametrize("data", [b"not a zip at all", b"PK\x03\x04garbage"])
def test_corrupt_files_are_refused_naming_the_format(data):
    with pytest.raises(InvalidDocumentError, match="^xlsx: "):
        xlsx_format.parse(data)


def test_a_zip_that_is_not_the_format_is_refused():
    with pytest.raises(InvalidDocumentError, match="^pptx: the file is not a readable PowerPoint"):
        pptx_format.parse(_docx())


def test_xml_with_entities_or_external_references_is_refused():
    external = b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>'
    for data in (BILLION_LAUGHS, external):
        with pytest.raises(InvalidDocumentError, match="xliff: .*DOCTYPE|xliff: .*amplification"):
            parse_xml(data, "xliff")
    assert parse_xml(b"<x>fine</x>", "xliff").getroot().text == "fine"
