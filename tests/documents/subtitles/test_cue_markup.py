"""A cue's tokens as unit text: pairs by key that always nest, void tags for the rest."""
from __future__ import annotations

from hymt.documents.inline_tags import parse_tree
from hymt.documents.subtitles.cue_markup import Mark, Role, Text, build_cue_text
from hymt.documents.unit_text import Literal, render_string

I_OPEN, I_CLOSE = Mark("<i>", Role.OPEN, "i"), Mark("</i>", Role.CLOSE, "i")
B_OPEN, B_CLOSE = Mark("<b>", Role.OPEN, "b"), Mark("</b>", Role.CLOSE, "b")
BREAK = Mark("\n", breaks=True)


def _identity(tokens) -> str:
    cue = build_cue_text(tokens)
    return render_string(parse_tree(cue.text), cue.markup)


def test_pairs_and_voids():
    tokens = [Mark("{\\an8}"), I_OPEN, Text("Hello"), BREAK, Text("there"), I_CLOSE, Text("!")]
    cue = build_cue_text(tokens)
    assert cue.text == "<s1/><s2>Hello<s3/>there</s2>!"
    assert cue.markup == {1: Literal("{\\an8}"), 2: Literal("<i>", "</i>"), 3: Literal("\n")}
    assert cue.plain == "Hello there!"
    assert cue.translatable and cue.tags_intact
    assert _identity(tokens) == "{\\an8}<i>Hello\nthere</i>!"


def test_crossed_and_unclosed_marks_become_void():
    tokens = [I_OPEN, Text("a"), B_OPEN, Text("b"), I_CLOSE, Text("c"), B_CLOSE, I_OPEN, Text("d")]
    cue = build_cue_text(tokens)
    assert cue.text == "<s1>a<s2/>b</s1>c<s3/><s4/>d"
    assert _identity(tokens) == "<i>a<b>b</i>c</b><i>d"


def test_text_that_looks_like_a_tag_is_a_placeholder():
    cue = build_cue_text([Text("say <s1> and </s2>")])
    assert cue.text == "say <s1/> and <s2/>"
    assert cue.tags_intact


def test_tags_intact_catches_text_that_reads_as_a_tag():
    # decoded references ("&lt;", "&gt;") around text: each piece alone is no tag
    assert not build_cue_text([Text("<"), Text("s1"), Text(">"), Text("</s1>")]).tags_intact
    assert not build_cue_text([Mark("<i>"), Text("<"), Text("s1/>")]).tags_intact


def test_no_letter_is_not_translatable():
    assert not build_cue_text([Text("♪ 123 ♪"), BREAK, Text("...")]).translatable
