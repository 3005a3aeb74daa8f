"""The HTML format under DeepL-style TagRules: ignored, splitting and non-splitting elements."""
from __future__ import annotations

from hymt.documents.html import FORMAT
from hymt.documents.inline_tags import parse_tree
from hymt.documents.units import TagRules


def units(text: str, rules: TagRules) -> list[str]:
    return [u.text for u in FORMAT.parse_markup(text.encode(), rules).units]


def identity(text: str, rules: TagRules) -> str:
    document = FORMAT.parse_markup(text.encode(), rules)
    return document.render([parse_tree(u.text) for u in document.units]).decode()


PAGE = ('<p>Run <code>make all</code> and <span translate="no">ACME Widget</span> today.</p>'
        '<div>One</div><div>two.</div>')


def test_ignored_elements_stay_as_they_are():
    ignored = units(PAGE, TagRules(ignore=frozenset({"code"})))
    assert ignored[0] == "Run <s1/> and <s2/> today."  # code and translate="no" both kept whole
    plain = units('<p>Run <b>make all</b> now.</p>', TagRules(ignore=frozenset({"b"})))
    assert plain == ["Run <s1/> now."]


def test_non_splitting_elements_join_their_sentence():
    assert units(PAGE, TagRules())[1:] == ["One", "two."]
    assert units(PAGE, TagRules(non_splitting=frozenset({"div"})))[1:] == ["<s1>One</s1><s2>two.</s2>"]


def test_without_outline_detection_only_splitting_elements_split():
    text = "<section><p>One.</p><p>Two.</p><hr><p>Three.</p></section>"
    assert units(text, TagRules(splitting=frozenset({"hr"}), outline_detection=False)) == [
        "<s1>One.</s1><s2>Two.</s2>", "Three."]  # markup around a whole unit stays outside it
    for rules in (TagRules(), TagRules(ignore=frozenset({"code"})), TagRules(outline_detection=False)):
        assert identity(PAGE, rules) == PAGE
