"""DOCX: a realistic document built with python-docx, its units, a marked translation and the
identity, read back with python-docx."""
from __future__ import annotations

import io

import docx
import pytest
from docx.opc.constants import CONTENT_TYPE as CT
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.opc.packuri import PackURI
from docx.opc.part import XmlPart
from docx.oxml import parse_xml
from docx.oxml.ns import nsdecls, qn
from PIL import Image

from hymt.documents import docx_format
from hymt.documents.inline_tags import parse_tree

NS = {"w": "http://schemas.openxmlformats.org/wordprocessingml/2006/main",
      "r": "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
      "mc": "http://schemas.openxmlformats.org/markup-compatibility/2006"}
TEXT_BOX = """<w:r xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"
  xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"
  xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"
  xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"
  xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape"
  xmlns:v="urn:schemas-microsoft-com:vml"><mc:AlternateContent>
 <mc:Choice Requires="wps"><w:drawing><wp:inline><wp:extent cx="914400" cy="914400"/><wp:docPr id="9" name="Box"/>
  <a:graphic><a:graphicData uri="http://schemas.microsoft.com/office/word/2010/wordprocessingShape"><wps:wsp>
  <wps:txbx><w:txbxContent><w:p><w:r><w:t>Words in a box</w:t></w:r></w:p></w:txbxContent></wps:txbx>
  </wps:wsp></a:graphicData></a:graphic></wp:inline></w:drawing></mc:Choice>
 <mc:Fallback><w:pict><v:shape><v:textbox><w:txbxContent><w:p><w:r><w:t>Words in a box</w:t></w:r></w:p>
 </w:txbxContent></v:textbox></v:shape></w:pict></mc:Fallback></mc:AlternateContent></w:r>"""
FOOTNOTES = (f'<w:footnotes {nsdecls("w")}><w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/>'
             '</w:r></w:p></w:footnote><w:footnote w:id="1"><w:p><w:r><w:t xml:space="preserve">A note with </w:t>'
             '</w:r><w:r><w:rPr><w:i/></w:rPr><w:t>slanted</w:t></w:r><w:r><w:t xml:space="preserve"> words.</w:t>'
             '</w:r></w:p></w:footnote></w:footnotes>')


def _field(instruction: str, result: str) -> str:
    return (f'<w:r {nsdecls("w")}><w:fldChar w:fldCharType="begin"/></w:r>'
            f'<w:r {nsdecls("w")}><w:instrText xml:space="preserve"> {instruction} </w:instrText></w:r>'
            f'<w:r {nsdecls("w")}><w:fldChar w:fldCharType="separate"/></w:r>'
            f'<w:r {nsdecls("w")}><w:t>{result}</w:t></w:r>'
            f'<w:r {nsdecls("w")}><w:fldChar w:fldCharType="end"/></w:r>')


def _append(paragraph, xml: str) -> None:
    for element in parse_xml(f'<w:wrap {nsdecls("w")}>{xml}</w:wrap>'):
        paragraph._p.append(element)


def build_document() -> bytes:
    document = docx.Document()
    document.settings.odd_and_even_pages_header_footer = True
    document.add_heading("Annual report", level=1)
    intro = document.add_paragraph("Sales rose ", style="Body Text")
    intro.add_run("sharply").bold = True
    intro.add_run(" in the north, and ")
    intro.add_run("fell").italic = True
    intro.add_run(" elsewhere; %s units shipped.")
    intro.add_run().add_tab()
    intro.add_run("See ")
    link_id = document.part.relate_to("https://example.com", RT.HYPERLINK, is_external=True)
    _append(intro, f'<w:hyperlink {nsdecls("w", "r")} r:id="{link_id}"><w:r><w:rPr><w:rStyle w:val="Hyperlink"/>'
                   '</w:rPr><w:t>our site</w:t></w:r></w:hyperlink>')
    _append(intro, '<w:r><w:t xml:space="preserve"> and </w:t></w:r>' + _field("REF fig1 \\h", "Figure one"))
    _append(intro, '<w:r><w:t>.</w:t></w:r><w:r><w:rPr><w:vertAlign w:val="superscript"/></w:rPr>'
                   '<w:footnoteReference w:id="1"/></w:r>')
    document.add_paragraph("")
    document.add_paragraph("   ")
    picture = io.BytesIO()
    Image.new("RGB", (4, 4), "red").save(picture, format="PNG")
    with_image = document.add_paragraph("Chart below:")
    with_image.add_run().add_picture(picture)
    with_image.add_run().add_break()
    with_image.add_run("Source: survey.")
    box = document.add_paragraph("Box follows")
    _append(box, TEXT_BOX)
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text = "Region"
    table.cell(0, 1).text = "Growth"
    table.cell(1, 0).text = "North"
    table.cell(1, 1).add_table(rows=1, cols=1).cell(0, 0).text = "Nested cell text"
    section = document.sections[0]
    section.different_first_page_header_footer = True
    section.header.paragraphs[0].text = "Default header"
    section.first_page_header.paragraphs[0].text = "First page header"
    section.even_page_header.paragraphs[0].text = "Even page header"
    footer = section.footer.paragraphs[0]
    footer.text = "Page "
    _append(footer, _field("PAGE", "1"))
    notes = XmlPart(PackURI("/word/footnotes.xml"), CT.WML_FOOTNOTES, parse_xml(FOOTNOTES), document.part.package)
    document.part.relate_to(notes, RT.FOOTNOTES)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _stories(data: bytes) -> dict[str, list]:
    """Every translated part's paragraphs, by part name, read with python-docx."""
    document = docx.Document(io.BytesIO(data))
    return {str(part.partname): list(part.element.iter(qn("w:p")))
            for part in document.part.package.iter_parts()
            if part.content_type in (CT.WML_DOCUMENT_MAIN, CT.WML_HEADER, CT.WML_FOOTER, CT.WML_FOOTNOTES)}


def _text(paragraph) -> str:
    return "".join(t.text or "" for t in paragraph.iter(qn("w:t")))


def _unmark(text: str) -> str:
    return text.replace("«", "").replace("»", "")


@pytest.fixture(scope="module")
def source() -> bytes:
    return build_document()


def test_units_are_paragraphs_with_formatting_as_tags(source):
    units = docx_format.parse(source).units
    texts = [unit.text for unit in units]
    assert texts[0] == "Annual report"
    assert texts[1] == ("Sales rose <s1>sharply</s1> in the north, and <s2>fell</s2> elsewhere; <s3/> units shipped."
                        "<s4/>See <s5>our site</s5> and <s6>Figure one</s6>.")
    assert "Chart below:<s1/>Source: survey." in texts
    assert texts.count("Words in a box") == 1  # the fallback copy is not a second unit
    for expected in ("Region", "Growth", "North", "Nested cell text", "Default header", "First page header",
                     "Even page header", "Page <s1>1</s1>", "A note with <s1>slanted</s1> words."):
        assert expected in texts
    assert all(unit.text.strip() for unit in units)
    assert units[1].where == "body ¶2" and units[-1].where.startswith("footnotes")


def test_marked_translation_reaches_every_text_once_and_keeps_the_rest(source, marked):
    document = docx_format.parse(source)
    out = marked(document)
    before, after = _stories(source), _stories(out)
    assert before.keys() == after.keys()
    for name in before:
        assert len(before[name]) == len(after[name]), name
        for old, new in zip(before[name], after[name]):
            assert _unmark(_text(new)) == _text(old)
            assert "««" not in _text(new) and "»»" not in _text(new)
            if any(c.isalpha() for c in _text(old)):
                assert "«" in _text(new), (name, _text(old))
            assert old.find(qn("w:pPr")) is None or new.find(qn("w:pPr")) is not None
    body = docx.Document(io.BytesIO(out))
    intro = body.paragraphs[1]
    assert intro.style.name == "Body Text"
    runs = {run.text: run for run in intro.runs}
    assert runs["«sharply»"].bold and runs["«fell»"].italic and not runs["«Sales rose »"].bold
    assert "%s" in runs and "\t" in [run.text for run in intro.runs]
    link = intro._p.find(qn("w:hyperlink"))
    assert link.get(qn("r:id")) == docx.Document(io.BytesIO(source)).paragraphs[1]._p.find(qn("w:hyperlink")).get(
        qn("r:id"))
    assert _text(link) == "«our site»"
    assert [t.text for t in intro._p.iter(qn("w:instrText"))] == [" REF fig1 \\h "]
    assert intro._p.find(f".//{qn('w:footnoteReference')}") is not None
    assert len(body.inline_shapes) == 1
    assert len(body.tables[0].cell(1, 1).tables) == 1


def test_text_box_choice_and_fallback_both_get_the_translation(source, marked):
    out = marked(docx_format.parse(source))
    body = _stories(out)["/word/document.xml"]
    boxes = [_text(p) for p in body if p.getparent().tag == qn("w:txbxContent")]
    assert boxes == ["«Words in a box»", "«Words in a box»"]


def test_identity_translation_gives_back_the_text_and_formatting(source, identity):
    out = identity(docx_format.parse(source))
    before, after = _stories(source), _stories(out)
    for name in before:
        assert [_text(p) for p in before[name]] == [_text(p) for p in after[name]]
    old, new = docx.Document(io.BytesIO(source)), docx.Document(io.BytesIO(out))
    for p_old, p_new in zip(old.paragraphs, new.paragraphs):
        # Character by character: runs may be cut differently (a placeholder is a run of its own).
        assert [(c, r.bold, r.italic) for r in p_old.runs for c in r.text] == \
            [(c, r.bold, r.italic) for r in p_new.runs for c in r.text]
    assert docx_format.parse(out).units == docx_format.parse(source).units


def test_render_twice_gives_the_same_document(source, marked):
    document = docx_format.parse(source)
    assert _stories(marked(document)).keys() == _stories(marked(document)).keys()
    assert [_text(p) for p in _stories(marked(document))["/word/document.xml"]] == \
        [_text(p) for p in _stories(marked(document))["/word/document.xml"]]


def test_a_translation_that_moves_tags_keeps_each_runs_formatting(source):
    document = docx_format.parse(source)
    trees = [parse_tree(unit.text) for unit in document.units]
    trees[1] = parse_tree("<s2>Fiel</s2> anderswo, <s1>stark</s1> im Norden; <s3/> Einheiten.<s4/>Siehe "
                          "<s5>unsere Seite</s5> und <s6>Abbildung eins</s6>.")
    intro = docx.Document(io.BytesIO(document.render(trees))).paragraphs[1]
    runs = {run.text: run for run in intro.runs}
    assert runs["Fiel"].italic and runs["stark"].bold and not runs[" anderswo, "].bold
