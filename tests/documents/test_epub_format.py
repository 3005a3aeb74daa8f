"""EPUB: an EPUB 2 book (NCX) and an EPUB 3 book (navigation document) written as zips, their
units, a marked translation read back with zipfile and lxml, the identity, and archives that
must be refused."""
from __future__ import annotations

import io
import re
import zipfile

import pytest
from lxml import etree
from marking import CLOSE, OPEN, mark_tree, unmark
from PIL import Image

from hymt.documents import epub_format
from hymt.documents.inline_tags import parse_tree
from hymt.documents.registry import format_for_filename
from hymt.documents.safety import safe_xml_parser
from hymt.documents.units import TagNode, TagRules, Tree
from hymt.errors import InvalidDocumentError

NS = {"opf": "http://www.idpf.org/2007/opf", "dc": "http://purl.org/dc/elements/1.1/",
      "ncx": "http://www.daisy.org/z3986/2005/ncx/", "x": "http://www.w3.org/1999/xhtml"}
CONTAINER = """<?xml version="1.0" encoding="UTF-8"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
  <rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles>
</container>"""
OPF2 = """<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="2.0" unique-identifier="BookId">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:opf="http://www.idpf.org/2007/opf">
    <dc:title>The Keeper of the Light</dc:title>
    <dc:creator opf:role="aut" opf:file-as="Author, Ann">Ann Author</dc:creator>
    <dc:language>en</dc:language>
    <dc:identifier id="BookId" opf:scheme="UUID">urn:uuid:0b6f7c1e-1d2a-4f7e-9a1b-2c3d4e5f6a7b</dc:identifier>
    <dc:date opf:event="publication">2021-05-04</dc:date>
    <dc:subject>FIC019000</dc:subject>
    <dc:description>&lt;p&gt;A &lt;b&gt;quiet&lt;/b&gt; novel about a lighthouse.&lt;/p&gt;</dc:description>
    <meta name="cover" content="cover-image"/>
  </metadata>
  <manifest>
    <item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>
    <item id="style" href="Styles/book.css" media-type="text/css"/>
    <item id="cover-image" href="Images/cover.png" media-type="image/png"/>
    <item id="chapter-2" href="Text/chapter%202.xhtml" media-type="application/xhtml+xml"/>
    <item id="chapter-1" href="Text/chapter1.xhtml" media-type="application/xhtml+xml"/>
  </manifest>
  <spine toc="ncx"><itemref idref="chapter-1"/><itemref idref="chapter-2"/></spine>
</package>"""
NCX = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE ncx PUBLIC "-//NISO//DTD ncx 2005-1//EN" "http://www.daisy.org/z3986/2005/ncx-2005-1.dtd">
<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1" xml:lang="en">
  <head><meta name="dtb:uid" content="urn:uuid:0b6f7c1e-1d2a-4f7e-9a1b-2c3d4e5f6a7b"/></head>
  <docTitle><text>The Keeper of the Light</text></docTitle>
  <docAuthor><text>Ann Author</text></docAuthor>
  <navMap>
    <navPoint id="np1" playOrder="1"><navLabel><text>Chapter One: The Storm</text></navLabel>
      <content src="Text/chapter1.xhtml"/>
      <navPoint id="np2" playOrder="2"><navLabel><text>A Light in the Dark</text></navLabel>
        <content src="Text/chapter1.xhtml#s2"/></navPoint>
    </navPoint>
    <navPoint id="np3" playOrder="3"><navLabel><text>Chapter Two</text></navLabel>
      <content src="Text/chapter%202.xhtml"/></navPoint>
  </navMap>
</ncx>"""
CHAPTER1 = """<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN" "http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">
<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en">
<head>
  <title>Chapter One</title>
  <link rel="stylesheet" type="text/css" href="../Styles/book.css"/>
  <style type="text/css">p.note { font-style: italic; }</style>
</head>
<body>
  <h1 id="c1">Chapter One: <a href="chapter%202.xhtml">The Storm</a></h1>
  <p>The wind rose at <em>dusk</em>, and the sea &amp; the sky turned grey.<br/>Nobody slept.</p>
  <p class="image"><img src="../Images/cover.png" alt="A lighthouse in a storm"/></p>
  <h2 id="s2">A Light in the Dark</h2>
  <p>She climbed the stairs &#8212; all <strong>two hundred</strong> of them.</p>
  <p translate="no">LOG 1893-11-02</p>
  <p>Type <code>lamp.on()</code> to light it.</p>
</body>
</html>"""
CHAPTER2 = """<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN" "http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">
<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en">
<head><title>Chapter Two</title></head>
<body>
  <h1>Chapter Two</h1>
  <p>Morning came <span class="smallcaps">slowly</span>.</p>
</body>
</html>"""
CSS = b"body { font-family: serif; }\nh1 { text-align: center; }\n"

OPF3 = """<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="pub-id" xml:lang="en">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
    <dc:identifier id="pub-id">urn:isbn:9780000000001</dc:identifier>
    <dc:title id="t1">Harbour Lights</dc:title>
    <meta refines="#t1" property="title-type">main</meta>
    <dc:language>en-GB</dc:language>
    <dc:creator id="c1">Ben Writer</dc:creator>
    <dc:description>Three short stories set by the sea.</dc:description>
    <meta property="dcterms:modified">2024-01-01T00:00:00Z</meta>
  </metadata>
  <manifest>
    <item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
    <item id="cover" href="images/cover.jpg" media-type="image/jpeg" properties="cover-image"/>
    <item id="font" href="fonts/serif.otf" media-type="font/otf"/>
    <item id="s1" href="story1.xhtml" media-type="application/xhtml+xml"/>
    <item id="notes" href="notes.xhtml" media-type="application/xhtml+xml"/>
  </manifest>
  <spine><itemref idref="s1"/></spine>
</package>"""
NAV = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" lang="en" xml:lang="en">
<head><meta charset="utf-8"/><title>Contents</title></head>
<body>
  <nav epub:type="toc" id="toc">
    <h1>Contents</h1>
    <ol>
      <li><a href="story1.xhtml">The Harbour Master</a></li>
      <li><a href="notes.xhtml">Notes on the Text</a></li>
    </ol>
  </nav>
  <nav epub:type="landmarks" hidden="">
    <ol><li><a epub:type="bodymatter" href="story1.xhtml">Start of Content</a></li></ol>
  </nav>
</body>
</html>"""
STORY = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" lang="en" xml:lang="en">
<head><title>The Harbour Master</title></head>
<body>
  <section epub:type="chapter">
    <h1>The <em>Harbour</em> Master</h1>
    <p>He counted the boats every evening<a epub:type="noteref" href="notes.xhtml#n1">1</a>.</p>
    <figure><img src="images/cover.jpg" alt="The harbour at dawn"/><figcaption>The harbour, 1901.</figcaption></figure>
    <p title="A quotation">“Twelve,” he said, ‘always twelve.’</p>
  </section>
</body>
</html>"""
NOTES = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" lang="en" xml:lang="en">
<head><title>Notes</title></head>
<body><aside epub:type="footnote" id="n1"><p>The harbour had fourteen moorings.</p></aside></body>
</html>"""

EPUB2_UNITS = [
    "The Keeper of the Light",
    "A <s1>quiet</s1> novel about a lighthouse.",
    "The Keeper of the Light",
    "Chapter One: The Storm",
    "A Light in the Dark",
    "Chapter Two",
    "Chapter One",
    "Chapter One: <s1>The Storm</s1>",
    "The wind rose at <s1>dusk</s1>, and the sea & the sky turned grey.<s2/>Nobody slept.",
    "A lighthouse in a storm",
    "A Light in the Dark",
    "She climbed the stairs — all <s1>two hundred</s1> of them.",
    "Type <s1/> to light it.",
    "Chapter Two",
    "Chapter Two",
    "Morning came <s1>slowly</s1>.",
]
EPUB3_UNITS = [
    "Harbour Lights",
    "Three short stories set by the sea.",
    "The Harbour Master",
    "The <s1>Harbour</s1> Master",
    "He counted the boats every evening<s1>1</s1>.",
    "The harbour at dawn",
    "The harbour, 1901.",
    "A quotation",
    "“Twelve,” he said, ‘always twelve.’",
    "Contents",
    "Contents",
    "The Harbour Master",
    "Notes on the Text",
    "Start of Content",
    "Notes",
    "The harbour had fourteen moorings.",
]


def png_bytes(color: str) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (24, 16), color).save(out, format="PNG")
    return out.getvalue()


COVER_PNG = png_bytes("navy")
COVER_JPEG = b"\xff\xd8\xff\xe0" + bytes(range(256)) * 8 + b"\xff\xd9"
FONT = b"OTTO" + bytes(range(7, 250)) * 16


def write_epub(entries: list[tuple[str, bytes | str]], *, mimetype: bool = True) -> bytes:
    """A zip as e-book tools write it: `mimetype` first and stored, the rest deflated
    (images stored, as they do not compress)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        if mimetype:
            archive.writestr(zipfile.ZipInfo("mimetype", (2024, 1, 2, 3, 4, 6)), "application/epub+zip")
        for name, content in entries:
            info = zipfile.ZipInfo(name, (2024, 1, 2, 3, 4, 6))
            info.compress_type = zipfile.ZIP_STORED if name.endswith((".png", ".jpg")) else zipfile.ZIP_DEFLATED
            archive.writestr(info, content)
    return out.getvalue()


def epub2(**replace: bytes | str) -> bytes:
    entries: dict[str, bytes | str] = {
        "META-INF/container.xml": CONTAINER,
        "OEBPS/content.opf": OPF2,
        "OEBPS/toc.ncx": NCX,
        "OEBPS/Styles/book.css": CSS,
        "OEBPS/Images/cover.png": COVER_PNG,
        "OEBPS/Text/chapter1.xhtml": CHAPTER1,
        "OEBPS/Text/chapter 2.xhtml": CHAPTER2,
    }
    entries.update(replace)
    return write_epub(list(entries.items()))


def epub3(**replace: bytes | str) -> bytes:
    entries: dict[str, bytes | str] = {
        "META-INF/container.xml": CONTAINER,
        "OEBPS/content.opf": OPF3,
        "OEBPS/nav.xhtml": NAV,
        "OEBPS/images/cover.jpg": COVER_JPEG,
        "OEBPS/fonts/serif.otf": FONT,
        "OEBPS/story1.xhtml": STORY,
        "OEBPS/notes.xhtml": NOTES,
    }
    entries.update(replace)
    return write_epub(list(entries.items()))


def identity_trees(document: epub_format.EpubDocument) -> list[Tree]:
    return [parse_tree(unit.text) for unit in document.units]


def entries_of(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def xml(data: bytes) -> etree._Element:
    """Parses as XML, so a chapter that is not well-formed fails the test."""
    return etree.fromstring(data, safe_xml_parser())


def texts(element: etree._Element, untranslated: bool = False) -> list[tuple[str, bool]]:
    """Every text and tail with a non-space character: (text, inside an element that is
    never translated)."""
    local = etree.QName(element).localname
    inside = untranslated or local in ("style", "script", "code") or element.get("translate") == "no"
    found = [(element.text, inside)] if element.text and element.text.strip() else []
    for child in element:
        if isinstance(child.tag, str):
            found += texts(child, inside)
        if child.tail and child.tail.strip():
            found.append((child.tail, inside))
    return found


MARKED_ONCE = re.compile(rf"\s*{OPEN}[^{OPEN}{CLOSE}]+{CLOSE}\s*")


def assert_marked_once(chapter: bytes, source: bytes) -> None:
    """Every translatable text of the chapter is marked exactly once, the others not at all,
    and without the marks the chapter's texts are the source's."""
    root = xml(chapter)
    for text, untranslated in texts(root):
        if untranslated:
            assert OPEN not in text, text
        else:
            assert MARKED_ONCE.fullmatch(text), text
    source_root = xml(source)
    assert [unmark(text) for text, _ in texts(root)] == [text for text, _ in texts(source_root)]


# -- units -------------------------------------------------------------------------------------------


def test_epub2_units_are_metadata_toc_labels_and_chapters_in_reading_order():
    document = epub_format.parse(epub2())
    assert [unit.text for unit in document.units] == EPUB2_UNITS
    wheres = [unit.where for unit in document.units]
    assert wheres[0] == "OEBPS/content.opf <title>, line 4"
    assert wheres[3] == "OEBPS/toc.ncx <text>, line 8"
    assert wheres[8] == "OEBPS/Text/chapter1.xhtml <p>, line 11"
    # Titles and labels are one request each; the description and chapter text may be split.
    assert [unit.split for unit in document.units[:6]] == [False, True, False, False, False, False]


def test_epub3_units_include_the_navigation_documents_link_texts():
    document = epub_format.parse(epub3())
    assert [unit.text for unit in document.units] == EPUB3_UNITS
    assert document.units[11].where.startswith("OEBPS/nav.xhtml <li>")


def test_tag_rules_apply_to_every_content_document():
    document = epub_format.parse_with_rules(epub2(), TagRules(ignore=frozenset({"h1", "title"})))
    assert "Chapter One: <s1>The Storm</s1>" not in [unit.text for unit in document.units]
    assert [unit.text for unit in document.units][:6] == EPUB2_UNITS[:6]  # metadata and NCX stay units
    assert len(document.units) == len(EPUB2_UNITS) - 4


def test_the_registry_knows_epub_by_suffix():
    assert format_for_filename("Book.EPUB") is epub_format.FORMAT
    assert epub_format.FORMAT.media_type == "application/epub+zip"


# -- a marked translation --------------------------------------------------------------------------


def test_epub2_marked_translation_reads_back_whole(marked):
    data = epub2()
    out = marked(epub_format.parse(data), target_language="de")
    before, after = entries_of(data), entries_of(out)
    with zipfile.ZipFile(io.BytesIO(out)) as archive:
        first = archive.infolist()[0]
        assert (first.filename, first.compress_type, first.extra) == ("mimetype", zipfile.ZIP_STORED, b"")
        assert out[30:38] == b"mimetype" and out[38:58] == b"application/epub+zip"  # as readers sniff it
        assert [i.compress_type for i in archive.infolist()][1:] == [8, 8, 8, 8, 0, 8, 8]
    assert list(after) == list(before)
    for name in ("META-INF/container.xml", "OEBPS/Styles/book.css", "OEBPS/Images/cover.png"):
        assert after[name] == before[name]
    for name in ("OEBPS/Text/chapter1.xhtml", "OEBPS/Text/chapter 2.xhtml"):
        assert_marked_once(after[name], before[name])
    chapter = xml(after["OEBPS/Text/chapter1.xhtml"])
    assert chapter.get("{http://www.w3.org/XML/1998/namespace}lang") == "de"
    assert chapter.find(".//x:img", NS).get("alt") == "«A lighthouse in a storm»"
    assert chapter.find(".//x:h1/x:a", NS).get("href") == "chapter%202.xhtml"
    assert after["OEBPS/Text/chapter1.xhtml"].count(b"<br/>") == 1  # self-closed tags as written

    opf = xml(after["OEBPS/content.opf"])
    assert opf.findtext(".//dc:language", namespaces=NS) == "de"
    assert opf.findtext(".//dc:title", namespaces=NS) == "«The Keeper of the Light»"
    assert opf.findtext(".//dc:description", namespaces=NS) == "<p>«A »<b>«quiet»</b>« novel about a lighthouse.»</p>"
    source_opf = xml(before["OEBPS/content.opf"])
    for untouched in ("creator", "identifier", "date", "subject"):
        assert opf.findtext(f".//dc:{untouched}", namespaces=NS) == source_opf.findtext(f".//dc:{untouched}",
                                                                                        namespaces=NS)
    ncx = xml(after["OEBPS/toc.ncx"])
    assert ncx.findtext("ncx:docAuthor/ncx:text", namespaces=NS) == "Ann Author"
    assert [t.text for t in ncx.iterfind(".//ncx:navLabel/ncx:text", NS)] == [
        "«Chapter One: The Storm»", "«A Light in the Dark»", "«Chapter Two»"]
    assert ncx.get("{http://www.w3.org/XML/1998/namespace}lang") == "de"
    assert b'<!DOCTYPE ncx PUBLIC "-//NISO//DTD ncx 2005-1//EN"' in after["OEBPS/toc.ncx"]


def test_epub3_marked_translation_reads_back_whole(marked):
    data = epub3()
    out = marked(epub_format.parse(data), target_language="zh-Hant")
    before, after = entries_of(data), entries_of(out)
    assert list(after) == list(before)
    assert after["OEBPS/images/cover.jpg"] == COVER_JPEG and after["OEBPS/fonts/serif.otf"] == FONT
    for name in ("OEBPS/story1.xhtml", "OEBPS/notes.xhtml", "OEBPS/nav.xhtml"):
        assert_marked_once(after[name], before[name])
        root = xml(after[name])
        assert (root.get("lang"), root.get("{http://www.w3.org/XML/1998/namespace}lang")) == ("zh-Hant", "zh-Hant")
    nav = xml(after["OEBPS/nav.xhtml"])
    assert [a.text for a in nav.iterfind(".//x:a", NS)] == ["«The Harbour Master»", "«Notes on the Text»",
                                                            "«Start of Content»"]
    assert [a.get("href") for a in nav.iterfind(".//x:a", NS)] == ["story1.xhtml", "notes.xhtml", "story1.xhtml"]
    opf = xml(after["OEBPS/content.opf"])
    assert opf.findtext(".//dc:language", namespaces=NS) == "zh-Hant"
    assert opf.findtext(".//dc:description", namespaces=NS) == "«Three short stories set by the sea.»"
    assert opf.findtext(".//opf:meta[@property='dcterms:modified']", namespaces=NS) == "2024-01-01T00:00:00Z"


def test_translated_text_is_escaped_for_xml():
    document = epub_format.parse(epub3())

    def change(tree: Tree) -> Tree:
        return tuple(f"{node} <b> & \x0b'\"" if isinstance(node, str) and node.strip()
                     else TagNode(node.number, change(node.children), node.void) if isinstance(node, TagNode)
                     else node for node in tree)

    after = entries_of(document.render([change(tree) for tree in identity_trees(document)]))
    story = xml(after["OEBPS/story1.xhtml"])
    assert story.findtext(".//x:figcaption", namespaces=NS) == "The harbour, 1901. <b> & '\""
    assert story.find(".//x:img", NS).get("alt") == "The harbour at dawn <b> & '\""
    assert xml(after["OEBPS/content.opf"]).findtext(".//dc:title", namespaces=NS) == "Harbour Lights <b> & '\""


# -- the identity ------------------------------------------------------------------------------------


@pytest.mark.parametrize("build", [epub2, epub3])
def test_identity_gives_every_entry_back_byte_for_byte(build):
    data = build()
    document = epub_format.parse(data)
    before = entries_of(data)
    assert entries_of(document.render(identity_trees(document))) == before
    relabelled = entries_of(document.render_for(identity_trees(document), "de"))
    assert {name for name in before if relabelled[name] != before[name]} == {"OEBPS/content.opf"}
    assert xml(relabelled["OEBPS/content.opf"]).findtext(".//dc:language", namespaces=NS) == "de"


def test_a_source_language_target_changes_nothing():
    data = epub2()
    document = epub_format.parse(data)
    assert entries_of(document.render_for(identity_trees(document), "en")) == entries_of(data)


def test_a_misplaced_or_compressed_mimetype_comes_back_first_and_stored(identity):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("META-INF/container.xml", CONTAINER)
        archive.writestr("mimetype", "application/epub+zip")
        for name, content in (("OEBPS/content.opf", OPF3), ("OEBPS/nav.xhtml", NAV), ("OEBPS/story1.xhtml", STORY),
                              ("OEBPS/notes.xhtml", NOTES)):
            archive.writestr(name, content)
    result = identity(epub_format.parse(out.getvalue()))
    with zipfile.ZipFile(io.BytesIO(result)) as archive:
        assert [i.filename for i in archive.infolist()][:3] == ["mimetype", "META-INF/container.xml",
                                                               "OEBPS/content.opf"]
        assert archive.infolist()[0].compress_type == zipfile.ZIP_STORED


def test_a_missing_mimetype_is_written_first(identity):
    data = write_epub([("META-INF/container.xml", CONTAINER), ("OEBPS/content.opf", OPF3), ("OEBPS/nav.xhtml", NAV),
                       ("OEBPS/story1.xhtml", STORY), ("OEBPS/notes.xhtml", NOTES)], mimetype=False)
    after = entries_of(identity(epub_format.parse(data)))
    assert list(after) == ["mimetype", *entries_of(data)] and after["mimetype"] == b"application/epub+zip"


def test_a_utf16_ncx_is_changed_in_utf16(marked):
    ncx = NCX.replace('encoding="UTF-8"', 'encoding="UTF-16"').encode("utf-16")
    document = epub_format.parse(epub2(**{"OEBPS/toc.ncx": ncx}))
    assert [unit.text for unit in document.units] == EPUB2_UNITS
    out = entries_of(marked(document))["OEBPS/toc.ncx"]
    assert out.startswith(ncx[:2]) and "«Chapter Two»" in out.decode("utf-16")
    assert xml(out).findtext(".//ncx:navPoint/ncx:navLabel/ncx:text", namespaces=NS) == "«Chapter One: The Storm»"


def test_a_utf16_chapter_stays_utf16(marked):
    chapter = CHAPTER2.replace('encoding="utf-8"', 'encoding="UTF-16"').encode("utf-16-be")
    chapter = b"\xfe\xff" + chapter
    document = epub_format.parse(epub2(**{"OEBPS/Text/chapter 2.xhtml": chapter}))
    assert [unit.text for unit in document.units] == EPUB2_UNITS
    out = entries_of(marked(document, target_language="ja"))["OEBPS/Text/chapter 2.xhtml"]
    assert out.startswith(b"\xfe\xff\x00<") and "<h1>«Chapter Two»</h1>" in out.decode("utf-16")
    assert_marked_once(out, chapter)
    assert xml(out).get("{http://www.w3.org/XML/1998/namespace}lang") == "ja"


def test_a_latin1_chapter_stays_latin1_with_character_references():
    chapter = CHAPTER2.replace('encoding="utf-8"', 'encoding="iso-8859-1"').replace("slowly", "lentement, déjà")
    document = epub_format.parse(epub2(**{"OEBPS/Text/chapter 2.xhtml": chapter.encode("latin-1")}))
    assert "Morning came <s1>lentement, déjà</s1>." in [unit.text for unit in document.units]
    trees = [tuple("朝" if isinstance(n, str) and n.strip() else n for n in tree) for tree in identity_trees(document)]
    out = entries_of(document.render(trees))["OEBPS/Text/chapter 2.xhtml"]
    assert b"&#26397;" in out and out.decode("latin-1")  # the declared encoding holds it as a reference
    assert xml(out).findtext(".//x:h1", namespaces=NS) == "朝"


# -- what is refused -----------------------------------------------------------------------------------


def refused(data: bytes) -> str:
    with pytest.raises(InvalidDocumentError) as err:
        epub_format.parse(data)
    message = str(err.value)
    assert message.startswith("epub")
    return message


def test_a_zip_bomb_is_refused():
    assert "zip bomb" in refused(epub2(**{"OEBPS/Images/big.bmp": bytes(4 * 1024 * 1024)}))


def test_an_entry_name_leaving_the_archive_is_refused():
    assert "outside the package" in refused(epub2(**{"../../evil.xhtml": CHAPTER2}))


def test_a_manifest_path_leaving_the_archive_is_ignored():
    opf = OPF2.replace('href="Text/chapter%202.xhtml"', 'href="../../etc/passwd"')
    units = [unit.text for unit in epub_format.parse(epub2(**{"OEBPS/content.opf": opf})).units]
    assert "Morning came <s1>slowly</s1>." not in units and len(units) == len(EPUB2_UNITS) - 3


def test_an_opf_declaring_entities_is_refused():
    laughs = ('<!DOCTYPE package [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">'
              '<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>\n<package ')
    opf = OPF2.replace("<package ", laughs, 1).replace("The Keeper of the Light", "&lol3;")
    assert "declares entities" in refused(epub2(**{"OEBPS/content.opf": opf}))


def test_an_ncx_with_an_external_entity_is_refused():
    ncx = NCX.replace('"http://www.daisy.org/z3986/2005/ncx-2005-1.dtd">',
                      '"x.dtd" [<!ENTITY secret SYSTEM "file:///etc/passwd">]>').replace("Chapter Two", "&secret;")
    assert "declares entities" in refused(epub2(**{"OEBPS/toc.ncx": ncx}))


DRM = """<?xml version="1.0" encoding="UTF-8"?>
<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" xmlns:enc="http://www.w3.org/2001/04/xmlenc#">
  <enc:EncryptedData><enc:EncryptionMethod Algorithm="{algorithm}"/>
    <enc:CipherData><enc:CipherReference URI="{uri}"/></enc:CipherData></enc:EncryptedData>
</encryption>"""


def test_a_book_with_drm_is_refused():
    encryption = DRM.format(algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc", uri="OEBPS/Text/chapter1.xhtml")
    message = refused(epub2(**{"META-INF/encryption.xml": encryption}))
    assert "DRM" in message and "OEBPS/Text/chapter1.xhtml" in message


def test_obfuscated_fonts_are_not_drm(identity):
    encryption = DRM.format(algorithm="http://www.idpf.org/2008/embedding", uri="OEBPS/fonts/serif.otf")
    data = epub3(**{"META-INF/encryption.xml": encryption})
    assert entries_of(identity(epub_format.parse(data))) == entries_of(data)


def test_an_obfuscated_chapter_cannot_be_read():
    encryption = DRM.format(algorithm="http://www.idpf.org/2008/embedding", uri="OEBPS/story1.xhtml")
    assert "OEBPS/story1.xhtml is encrypted" in refused(epub3(**{"META-INF/encryption.xml": encryption}))


def test_files_that_are_not_epubs_are_refused():
    assert "not a valid" in refused(b"PK\x03\x04 not really a zip")
    assert "META-INF/container.xml" in refused(write_epub([("OEBPS/content.opf", OPF2)]))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("mimetype", "application/vnd.oasis.opendocument.text")
        archive.writestr("META-INF/container.xml", CONTAINER)
    assert "mimetype" in refused(out.getvalue())
    assert "not well-formed" in refused(epub2(**{"OEBPS/toc.ncx": NCX.replace("</navMap>", "")}))


def test_render_wants_one_translation_per_unit():
    from hymt.errors import InvalidInputError

    document = epub_format.parse(epub3())
    with pytest.raises(InvalidInputError, match="one per unit"):
        document.render([mark_tree(tree) for tree in identity_trees(document)][:-1])


# -- end to end ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def translator():
    from hymt.checkpoint import load_checkpoint
    from hymt.testing import ScriptedEngine, source_of, write_tiny_checkpoint
    from hymt.translate import Translator

    def shout(user_turn: str, params: object) -> str:
        """Upper-cases the source, tags kept, as the formatted template's answer."""
        upper = re.sub(r"(<[^>]*>)|([^<]+)", lambda m: m.group(1) or m.group(2).upper(), source_of(user_turn))
        return f"<target>{upper}</target>" if "<source>" in user_turn else upper

    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        directory = write_tiny_checkpoint(Path(folder) / "HY-MT1.5-1.8B", "HY-MT1.5-1.8B")
        engine = ScriptedEngine(load_checkpoint(directory), shout)
        made = Translator(str(directory), engine=engine)
        yield made, engine
        made.close()


def test_translate_file_turns_an_epub_into_a_translated_epub(translator):
    made, engine = translator
    result = made.translate_file(epub3(), to="de", source="en", filename="book.epub")
    assert result.filename == "book.de.epub" and result.format == "epub"
    after = entries_of(result.data)
    story = xml(after["OEBPS/story1.xhtml"])
    assert story.findtext(".//x:h1/x:em", namespaces=NS) == "HARBOUR"
    assert story.find(".//x:img", NS).get("alt") == "THE HARBOUR AT DAWN"
    assert story.get("lang") == "de"
    opf = xml(after["OEBPS/content.opf"])
    assert (opf.findtext(".//dc:title", namespaces=NS), opf.findtext(".//dc:language", namespaces=NS)) == (
        "HARBOUR LIGHTS", "de")
    assert after["OEBPS/images/cover.jpg"] == COVER_JPEG
    assert any("<s1>Harbour</s1>" in user for user, _ in engine.prompts)
