"""Placeholders become tags and come back byte for byte; prose around them stays text."""
from __future__ import annotations

import pytest

from hymt.documents.inline_tags import parse_tree, tree_text
from hymt.documents.placeholders import I18N, PROSE, Syntax
from hymt.documents.unit_text import Literal, UnitText, read_string, render_string

CASES = [
    ("Delete %d files?", "Delete <s1/> files?"),
    ("%1$s sent %2$d messages", "<s1/> sent <s2/> messages"),
    ("Hello %(name)s, 100%% done", "Hello <s1/>, 100<s2/> done"),
    ("Hi {name}, item {0} of {}", "Hi <s1/>, item <s2/> of <s3/>"),
    ("Welcome {{user.name}} to ${site}", "Welcome <s1/> to <s2/>"),
    ("Hello %{name} and %<count>d", "Hello <s1/> and <s2/>"),
    ("Press <b>Save</b> now<br/>", "Press <s1>Save</s1> now<s2/>"),
    ('A <a href="/x">link <i>here</i></a>.', "A <s1>link <s2>here</s2></s1>."),
    ("See https://example.com/a?b=1.", "See <s1/>."),
    ("A literal <s1> in text", "A literal <s1/> in text"),
    (
        "You have {count, plural, =0 {no files} one {# file} other {# files}}.",
        "You have <s1><s2>no files</s2><s3><s4/> file</s3><s5><s6/> files</s5></s1>.",
    ),
    (
        "{g, select, male {He} female {She} other {They}} replied",
        "<s1><s2>He</s2><s3>She</s3><s4>They</s4></s1> replied",
    ),
]


@pytest.mark.parametrize("source, unit_text", CASES)
def test_placeholders_become_tags_and_come_back_exactly(source, unit_text):
    unit = read_string(source, I18N)
    assert unit is not None
    assert unit.text == unit_text
    assert unit.render(parse_tree(unit.text)) == source


@pytest.mark.parametrize("text", ["50% done", "100 % sure", "a {b", "x } y", "5 < 6 and 7 > 3"])
def test_prose_with_percent_signs_and_lone_braces_stays_text(text):
    unit = read_string(text, I18N)
    assert unit is not None and unit.text == text and not unit.markup


def test_icu_branches_are_translated_and_the_syntax_kept():
    source = "{n, plural, one {# day left} other {# days left}}"
    unit = read_string(source, I18N)
    assert unit is not None
    tree = parse_tree(unit.text.replace("day left", "Tag übrig").replace("days left", "Tage übrig"))
    assert unit.render(tree) == "{n, plural, one {# Tag übrig} other {# Tage übrig}}"


def test_text_put_between_icu_branches_moves_before_the_argument():
    source = "{n, plural, one {# day} other {# days}}"
    unit = read_string(source, I18N)
    assert unit is not None
    stray = unit.text.replace("<s1><s2>", "<s1>noch <s2>")
    assert unit.render(parse_tree(stray)) == "noch {n, plural, one {# day} other {# days}}"


def test_prose_keeps_an_icu_message_as_one_placeholder():
    unit: UnitText[Literal] = UnitText(PROSE)
    unit.add_text("Total: {count, plural, one {# file} other {# files}}")
    assert unit.text == "Total: <s1/>"


def test_a_family_can_be_turned_off():
    unit = read_string("Rate: 5%d", I18N & ~Syntax.PRINTF)
    assert unit is not None and unit.text == "Rate: 5%d"


@pytest.mark.parametrize("text", ["%s", "{0} / {1}", "42", "  ", "https://example.com", "me@example.com"])
def test_strings_with_nothing_to_translate_are_not_units(text):
    assert read_string(text, I18N) is None


def test_the_margins_stay_outside_the_unit():
    unit = read_string("\n  Hello world \n", I18N)
    assert unit is not None
    assert unit.text == "Hello world"
    assert unit.render(("Hallo Welt",)) == "\n  Hallo Welt \n"


def test_render_string_escapes_only_the_translated_text():
    unit = read_string("<b>Tom</b> & Jerry", I18N)
    assert unit is not None
    out = render_string(parse_tree(unit.text), unit.markup, escape=lambda s: s.replace("&", "&amp;"))
    assert out == "<b>Tom</b> &amp; Jerry"
    assert tree_text(parse_tree(unit.text)) == "Tom & Jerry"
