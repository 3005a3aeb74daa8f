"""XML parts read with byte ranges: elements, texts and in-place edits, in any encoding; entity
declarations and external entities refused."""
from __future__ import annotations

import pytest

from hymt.documents.xml_spans import escape_xml_text, read_spanned_xml, splice, with_language
from hymt.errors import InvalidDocumentError

PART = """<?xml version="1.0" encoding="{encoding}"?>
<!DOCTYPE ncx PUBLIC "-//NISO//DTD ncx 2005-1//EN" "http://www.daisy.org/z3986/2005/ncx-2005-1.dtd">
<root xmlns:dc="urn:dc" xml:lang="en"><dc:t n='1'>Tom &amp; <![CDATA[<Jerry>]]> &#233;t&#233;</dc:t><empty/>
<pair></pair><mixed>a<!-- note -->b</mixed></root>"""


@pytest.mark.parametrize(("encoding", "codec"), [("UTF-8", "utf-8"), ("UTF-16", "utf-16"),
                                                  ("ISO-8859-1", "latin-1")])
def test_elements_have_exact_ranges_in_any_encoding(encoding, codec):
    data = PART.format(encoding=encoding).encode(codec)
    part = read_spanned_xml(data, "test part")
    names = [element.name for element in part.elements]
    assert names == ["root", "{urn:dc}t", "empty", "pair", "mixed"]
    root, title, empty, pair, mixed = part.elements
    assert part.decode(root.tag) == '<root xmlns:dc="urn:dc" xml:lang="en">'
    assert part.decode(title.tag) == "<dc:t n='1'>"
    assert part.decode(title.content) == "Tom &amp; <![CDATA[<Jerry>]]> &#233;t&#233;"
    assert (title.text, title.attributes, title.line, title.parent) == ("Tom & <Jerry> été", {"n": "1"}, 3, 0)
    assert (part.decode(empty.tag), part.decode(empty.content), empty.text) == ("<empty/>", "", "")
    assert (part.decode(pair.tag), part.decode(pair.content)) == ("<pair>", "")
    assert mixed.text is None and root.text is None

    edited = splice(data, [(title.content, part.encode(escape_xml_text("Tom & Jerry — 夏"))),
                           (root.tag, part.encode(with_language(part.decode(root.tag), "zh-Hant")))])
    again = read_spanned_xml(edited, "test part")
    assert again.elements[1].text == "Tom & Jerry — 夏"
    assert again.elements[0].attributes["{http://www.w3.org/XML/1998/namespace}lang"] == "zh-Hant"
    # Characters the encoding lacks become character references.
    assert (part.encode("夏") == "&#22799;".encode(codec)) == (codec == "latin-1")


def test_with_language_changes_only_lang_attributes():
    tag = """<html xmlns="http://www.w3.org/1999/xhtml" lang="en" xml:lang='en-GB' data-lang="x" hreflang="en">"""
    assert with_language(tag, "de") == (
        """<html xmlns="http://www.w3.org/1999/xhtml" lang="de" xml:lang='de' data-lang="x" hreflang="en">""")
    assert with_language("<html>", "de") == "<html>"


def test_splice_refuses_overlapping_edits():
    assert splice(b"abcdef", [((4, 5), b"E"), ((0, 1), b"A")]) == b"AbcdEf"
    with pytest.raises(ValueError, match="overlapping"):
        splice(b"abcdef", [((0, 3), b"x"), ((2, 4), b"y")])


@pytest.mark.parametrize("doctype", [
    '<!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>',
    '<!DOCTYPE r [<!ENTITY a SYSTEM "file:///etc/passwd">]>',
    '<!DOCTYPE r [<!ENTITY % p SYSTEM "http://example.com/evil.dtd"> %p;]>',
])
def test_entity_declarations_are_refused(doctype):
    with pytest.raises(InvalidDocumentError, match="test part declares entities"):
        read_spanned_xml(f"<?xml version='1.0'?>{doctype}<r>&a;</r>".encode(), "test part")


def test_malformed_xml_is_an_invalid_document():
    with pytest.raises(InvalidDocumentError, match="test part is not well-formed XML"):
        read_spanned_xml(b"<r><a></r>", "test part")
