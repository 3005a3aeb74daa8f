"""XLIFF 1.2 and 2.0: which units are sent, inline codes kept exactly, states and notes, and
refused entity tricks. Files built and read back with lxml."""
from __future__ import annotations

import pytest
from lxml import etree

from hymt.documents import xliff_format
from hymt.errors import InvalidDocumentError

V1 = "urn:oasis:names:tc:xliff:document:1.2"
V2 = "urn:oasis:names:tc:xliff:document:2.0"


def build_v1() -> bytes:
    x = etree.Element(f"{{{V1}}}xliff", nsmap={None: V1}, version="1.2")
    file = etree.SubElement(x, f"{{{V1}}}file", {"source-language": "en", "datatype": "html", "original": "p.html"})
    body = etree.SubElement(file, f"{{{V1}}}body")

    def unit(parent, uid, source_xml, target=None, **attrs):
        tu = etree.SubElement(parent, f"{{{V1}}}trans-unit", id=uid, **attrs)
        tu.append(etree.fromstring(f'<source xmlns="{V1}">{source_xml}</source>'))
        if target is not None:
            tu.append(etree.fromstring(f'<target xmlns="{V1}" {target}</target>'))
        etree.SubElement(tu, f"{{{V1}}}note").text = f"note {uid}"
        return tu

    unit(body, "1", 'Click <g id="1" ctype="bold">here</g> to <x id="2"/>continue, %s.')
    unit(body, "2", "ACME Corp", translate="no")
    unit(body, "3", "Yes", 'state="final">Ja')
    unit(body, "4", "Stale", 'state="needs-translation">Stale')
    unit(body, "5", "Approved", ">Genehmigt", approved="yes")
    group = etree.SubElement(body, f"{{{V1}}}group", id="g1", translate="no")
    unit(group, "6", "Inside a frozen group")
    unit(body, "7", 'Line<ph id="1">&lt;br/&gt;</ph>two and <bpt id="2">&lt;i&gt;</bpt>it<ept id="2">&lt;/i&gt;'
                    '</ept> <mrk mtype="protected">Keep Me</mrk>')
    segmented = unit(body, "8", "One. Two.")
    seg = etree.fromstring(f'<seg-source xmlns="{V1}"><mrk mtype="seg" mid="1">One.</mrk> '
                           '<mrk mtype="seg" mid="2">Two.</mrk></seg-source>')
    segmented.insert(1, seg)
    return etree.tostring(x, xml_declaration=True, encoding="UTF-8")


def build_v2() -> bytes:
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<xliff xmlns="{V2}" version="2.0" srcLang="en">
 <file id="f1">
  <unit id="u1">
   <notes><note>Greeting on the home page</note></notes>
   <originalData><data id="d1">&lt;b&gt;</data><data id="d2">&lt;/b&gt;</data></originalData>
   <segment id="s1"><source>Hello <pc id="1" dataRefStart="d1" dataRefEnd="d2">dear</pc> {{name}}<ph id="2"/></source>
   </segment>
   <ignorable><source> </source></ignorable>
   <segment id="s2">
    <source>Made by <mrk id="m1" translate="no">ACME</mrk> <sc id="3"/>today<ec startRef="3"/>.</source>
   </segment>
   <segment id="s3" state="final"><source>Done</source><target>Fertig</target></segment>
   <segment id="s4" state="initial"><source>Redo</source><target>Redo</target></segment>
  </unit>
  <unit id="u2" translate="no"><segment><source>Skip me</source></segment></unit>
 </file>
</xliff>""".encode()


def test_v1_units_respect_translate_approved_and_states():
    units = xliff_format.parse(build_v1()).units
    assert [(u.where, u.text) for u in units] == [
        ("unit 1", "Click <s1>here</s1> to <s2/>continue, <s3/>."),
        ("unit 4", "Stale"),
        ("unit 7", "Line<s1/>two and <s2/>it<s3/> <s4/>"),
        ("unit 8 segment 1", "One."),
        ("unit 8 segment 2", "Two."),
    ]
    assert units[0].split and not units[3].split


def _targets(data: bytes, ns: str) -> dict[str, etree._Element]:
    root = etree.fromstring(data)
    tag = "trans-unit" if ns == V1 else "segment"
    return {el.get("id"): el.find(f"{{{ns}}}target") for el in root.iter(f"{{{ns}}}{tag}")}


def test_v1_targets_copy_inline_codes_exactly(marked):
    source = build_v1()
    out = marked(xliff_format.parse(source), target_language="de")
    targets = _targets(out, V1)
    one = targets["1"]
    assert etree.tostring(one, encoding="unicode", with_tail=False).split(">", 1)[1] == (
        '«Click »<g id="1" ctype="bold">«here»</g>« to »<x id="2"/>«continue, »%s«.»</target>')
    assert one.get("state") == "translated" and one.get("state-qualifier") == "mt-suggestion"
    seven = etree.tostring(targets["7"], encoding="unicode", with_tail=False)
    assert '<ph id="1">&lt;br/&gt;</ph>' in seven and '<mrk mtype="protected">Keep Me</mrk>' in seven
    assert targets["2"] is None and targets["6"] is None
    assert targets["3"].text == "Ja" and targets["5"].text == "Genehmigt"
    assert targets["4"].text == "«Stale»"
    marks = [m.text for m in targets["8"].iter(f"{{{V1}}}mrk")]
    assert marks == ["«One.»", "«Two.»"]
    root = etree.fromstring(out)
    assert root.find(f"{{{V1}}}file").get("target-language") == "de"
    assert [n.text for n in root.iter(f"{{{V1}}}note")] == [f"note {n}" for n in "12345678"]
    source_root = etree.fromstring(source)
    assert [etree.tostring(s) for s in root.iter(f"{{{V1}}}source")] == \
        [etree.tostring(s) for s in source_root.iter(f"{{{V1}}}source")]


def test_v2_segments_and_states(marked):
    document = xliff_format.parse(build_v2())
    assert [u.text for u in document.units] == ["Hello <s1>dear</s1> <s2/><s3/>", "Made by <s1/> <s2/>today<s3/>.",
                                                "Redo"]
    assert not any(u.split for u in document.units)
    out = marked(document)
    targets = _targets(out, V2)
    first = etree.tostring(targets["s1"], encoding="unicode", with_tail=False)
    assert '<pc id="1" dataRefStart="d1" dataRefEnd="d2">«dear»</pc>' in first and "{name}<ph id=\"2\"/>" in first
    second = etree.tostring(targets["s2"], encoding="unicode", with_tail=False)
    assert '<mrk id="m1" translate="no">ACME</mrk>' in second and '<sc id="3"/>«today»<ec startRef="3"/>' in second
    assert targets["s3"].text == "Fertig" and targets["s4"].text == "«Redo»"
    root = etree.fromstring(out)
    states = {s.get("id"): s.get("state") for s in root.iter(f"{{{V2}}}segment")}
    assert states == {"s1": "translated", "s2": "translated", "s3": "final", "s4": "translated", None: None}
    assert root.find(f".//{{{V2}}}note").text == "Greeting on the home page"
    assert root.get("trgLang") is None


def test_identity_translation_gives_targets_equal_to_sources(identity):
    out = identity(xliff_format.parse(build_v2()))
    root = etree.fromstring(out)
    for segment in root.iter(f"{{{V2}}}segment"):
        source, target = segment.find(f"{{{V2}}}source"), segment.find(f"{{{V2}}}target")
        if segment.get("id") in ("s1", "s2", "s4"):
            assert etree.tostring(source).replace(b"source", b"target") == etree.tostring(target)


@pytest.mark.parametrize("doctype", [
    '<!DOCTYPE x [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>',
    '<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>',
    '<!DOCTYPE xliff SYSTEM "http://example.com/xliff.dtd">',
])
def test_entity_declarations_are_refused(doctype):
    data = build_v1().replace(b"?>", f"?>{doctype}".encode(), 1).replace(b"Click", b"&b; Click"
                                                                          if b"&a;" in doctype.encode() else b"Click")
    with pytest.raises(InvalidDocumentError, match="^xliff: "):
        xliff_format.parse(data)


def test_other_xml_is_refused():
    with pytest.raises(InvalidDocumentError, match="not <xliff>"):
        xliff_format.parse(b"<html><body>hi</body></html>")
    with pytest.raises(InvalidDocumentError, match="not well-formed"):
        xliff_format.parse(b"<xliff><file>")
