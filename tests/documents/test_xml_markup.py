"""XML markup (DeepL's tag_handling=xml): units under each TagRules option, untouched bytes
exact, translated text escaped, and the defused refusals. Output is read back with lxml."""
from __future__ import annotations

import pytest
from lxml import etree

from hymt.documents import xml_markup
from hymt.documents.registry import get_format
from hymt.documents.units import TagRules
from hymt.errors import InvalidDocumentError

DOCUMENT = """<?xml version="1.0" encoding="UTF-8"?>
<doc lang="en">
  <title>Quarterly report</title>
  <p>Press <b id="x">Save</b><br/> &amp; wait &#x21;</p>
  <raw>do_not_touch()</raw>
  <!-- a comment --><?render fast?>
  <p>Code: <![CDATA[if a < b]]> ends here.</p>
</doc>
"""


def units(text: str, **rules: object) -> list[str]:
    return [u.text for u in xml_markup.parse_with_rules(text.encode(), TagRules(**rules)).units]  # type: ignore[arg-type]


def test_outline_detection_finds_text_elements_and_keeps_inline_ones_as_tags():
    assert units(DOCUMENT) == [
        "Quarterly report",
        "Press <s1>Save</s1><s2/> & wait !",
        "do_not_touch()",
        "Code: <s1/> ends here.",
    ]


def test_untouched_bytes_come_back_exactly(identity):
    document = xml_markup.parse(DOCUMENT.encode())
    assert identity(document) == DOCUMENT.encode()


def test_translated_text_is_escaped_and_markup_kept(marked):
    out = marked(xml_markup.parse(DOCUMENT.encode())).decode()
    assert '<b id="x">«Save»</b><br/>« &amp; wait !»' in out
    assert "<![CDATA[if a < b]]>" in out and "<!-- a comment --><?render fast?>" in out
    assert out.replace("«", "").replace("»", "").replace("&amp; wait !", "&amp; wait &#x21;") == DOCUMENT
    etree.fromstring(out.split("?>", 1)[1].encode())  # still well-formed


def test_ignore_tags_and_translate_no_stay_byte_for_byte(marked):
    text = '<p>Call <raw>f(x)</raw> now.</p><raw>Keep <b>me</b></raw><note translate="no">Nope</note>'
    assert units(text, ignore=frozenset({"raw"})) == ["Call <s1/> now."]
    out = marked(xml_markup.parse_with_rules(text.encode(), TagRules(ignore=frozenset({"raw"})))).decode()
    assert out == '<p>«Call »<raw>f(x)</raw>« now.»</p><raw>Keep <b>me</b></raw><note translate="no">Nope</note>'


def test_non_splitting_tags_join_a_sentence_across_elements():
    text = "<par>The firm said it had been </par><par> conducting an internal investigation.</par>"
    assert units(text) == ["The firm said it had been", "conducting an internal investigation."]
    assert units(text, non_splitting=frozenset({"par"})) == [
        "<s1>The firm said it had been </s1><s2> conducting an internal investigation.</s2>"]


def test_splitting_tags_end_units_even_inside_text():
    text = "<p>First part<sep/>second part <i>with<sep/>more</i></p>"
    assert units(text) == ["First part<s1/>second part <s2>with<s3/>more</s2>"]
    assert units(text, splitting=frozenset({"sep"})) == ["First part", "second part", "with", "more"]


def test_outline_detection_off_makes_one_unit_between_splitting_tags(identity):
    text = "<doc><h>Title</h><p>Body</p><hr/><p>Next</p></doc>"
    assert units(text) == ["Title", "Body", "Next"]
    assert units(text, outline_detection=False) == ["<s1><s2>Title</s2><s3>Body</s3><s4/><s5>Next</s5></s1>"]
    assert units(text, outline_detection=False, splitting=frozenset({"hr"})) == [
        "<s1>Title</s1><s2>Body</s2>", "<s1>Next</s1>"]
    document = xml_markup.parse_with_rules(text.encode(), TagRules(outline_detection=False))
    assert identity(document) == text.encode()


def test_fragments_and_whitespace_around_units(marked):
    text = "  Hello <b>world</b>.\n"
    document = xml_markup.parse(text.encode())
    assert [u.text for u in document.units] == ["Hello <s1>world</s1>."]
    assert marked(document) == "  «Hello »<b>«world»</b>«.»\n".encode()


def test_nothing_to_translate_stays_outside_units():
    assert units("<a> <b>42</b> <c/> </a>") == []
    assert units("<p>see https://example.org/a?b=1&amp;c=2</p>") == ["see <s1/>"]


@pytest.mark.parametrize(("data", "reason"), [
    (b'<!DOCTYPE d [<!ENTITY e "x">]><d>&e;</d>', "DOCTYPE"),
    (b"<a>&nbsp;</a>", "undefined entity"),
    (b"<a><b></a>", "mismatched tag"),
    (b"<a>open", "not closed"),
    (b"<a>\xff</a>", "not UTF-8"),
    (b"", "empty"),
])
def test_refusals_name_the_problem(data, reason):
    with pytest.raises(InvalidDocumentError, match=reason):
        xml_markup.parse(data)


def test_depth_is_bounded(identity):
    def nested(depth: int) -> bytes:
        return b"<a>" * depth + b"x" + b"<b>y</b>" + b"</a>" * depth

    deepest = nested(xml_markup.MAX_DEPTH - 1)
    for rules in (TagRules(), TagRules(outline_detection=False)):
        assert identity(xml_markup.parse_with_rules(deepest, rules)) == deepest
    with pytest.raises(InvalidDocumentError, match="deeper"):
        xml_markup.parse(nested(xml_markup.MAX_DEPTH + 1))


def test_registered_as_a_text_format_that_honours_rules():
    fmt = get_format("xml", text_only=True)
    assert fmt is xml_markup.FORMAT and fmt.parse_with_rules is not None
    document = fmt.parse_markup(b"<p>A <raw>b</raw></p>", TagRules(ignore=frozenset({"raw"})))
    assert [u.text for u in document.units] == ["A <s1/>"]
