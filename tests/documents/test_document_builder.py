"""DocumentBuilder.place: what becomes a unit, how its tags are numbered, how it renders."""
from __future__ import annotations

import pytest

from hymt.documents.document_builder import DocumentBuilder, Text, UnitPieces
from hymt.documents.inline_tags import parse_tree
from hymt.documents.text_document import Slot
from hymt.errors import InvalidInputError


def escape(text: str, at_start: bool, at_end: bool) -> str:
    return f"{'^' if at_start else ''}{text.replace('&', '&amp;')}{'$' if at_end else ''}"


def build(pieces: UnitPieces, **options) -> tuple[DocumentBuilder, object]:
    doc = DocumentBuilder("x")
    placed = doc.place(pieces.pieces, offset=0, escape=escape, label="p", **options)
    doc.literal(placed)
    return doc, placed


def sentence() -> UnitPieces:
    """`<p> <a href="/">Please <b>do not</b> reply.</a><br></p>` as pieces."""
    pieces = UnitPieces()
    pieces.text(" ", "\n  ")
    link = pieces.open(('<a href="/">',))
    pieces.text("Please ", "Please ")
    bold = pieces.open(("<b>",))
    pieces.text("do not", "do&#32;not")
    pieces.close(bold, ("</b>",))
    pieces.text(" reply.", " reply.")
    pieces.close(link, ("</a>",))
    pieces.void(("<br>",))
    return pieces


def test_markup_around_the_whole_unit_stays_outside_it():
    doc, placed = build(sentence())
    assert placed == ("\n  ", '<a href="/">', Slot(0), "</a>", "<br>")
    document = doc.build(bom=False)
    assert [unit.text for unit in document.units] == ["Please <s1>do not</s1> reply."]
    assert document.units[0].where == "p, line 1"


def test_identity_gives_back_the_source_and_translations_are_escaped():
    document = build(sentence())[0].build(bom=False)
    source = '\n  <a href="/">Please <b>do&#32;not</b> reply.</a><br>'
    assert document.render([parse_tree("Please <s1>do not</s1> reply.")]).decode() == source
    answer = parse_tree("<s1>Bitte</s1> nicht & antworten.")
    # only a text node at the unit's very start or end is escaped as such
    assert document.render([answer]).decode() == '\n  <a href="/"><b>Bitte</b> nicht &amp; antworten.$</a><br>'


def test_tags_that_do_not_pair_become_void_tags():
    pieces = UnitPieces()
    pieces.text("zero ", "zero ")
    stray = pieces.open(("<i>",))
    pieces.text("one ", "one ")
    bold = pieces.open(("<b>",))
    pieces.text("two", "two")
    pieces.close(stray, ("</i>",))
    pieces.close(bold, ("</b>",))
    pieces.text(" three", " three")
    doc, _ = build(pieces)
    assert [unit.text for unit in doc.build(bom=False).units] == ["zero <s1/>one <s2>two<s3/></s2> three"]


def test_tag_numbers_restart_in_every_unit():
    doc = DocumentBuilder("ab")
    for word in ("a", "b"):
        pieces = UnitPieces()
        pieces.text(word, word)
        pieces.void(("<br>",))
        pieces.text(word, word)
        doc.literal(doc.place(pieces.pieces, offset=0 if word == "a" else 1, escape=escape, label=""))
    assert [unit.text for unit in doc.build(bom=False).units] == ["a<s1/>a", "b<s1/>b"]


def test_units_come_in_source_order_whatever_order_they_were_placed_in():
    doc = DocumentBuilder("first\nsecond")
    late = doc.place([Text("second", "second")], offset=6, escape=escape, label="")
    early = doc.place([Text("first", "first")], offset=0, escape=escape, label="")
    doc.literal((*early, "\n", *late))
    document = doc.build(bom=True)
    assert [unit.text for unit in document.units] == ["first", "second"]
    assert [unit.where for unit in document.units] == ["line 1", "line 2"]
    assert document.render([("1",), ("2",)]).decode() == "\ufeff^1$\n^2$"


def test_a_unit_without_words_stays_literal():
    pieces = UnitPieces()
    pieces.text("42 ", "42 ")
    pieces.void(("<img>",))
    doc, placed = build(pieces)
    assert placed == ("42 ", "<img>")
    assert doc.build(bom=False).units == ()


def test_a_translated_tag_can_change_its_closing_markup():
    pieces = UnitPieces()
    link = pieces.open(("[",), close_if_changed=("][label]",))
    pieces.text("label", "label")
    pieces.close(link, ("]",))
    pieces.text(" here", " here")
    document = build(pieces)[0].build(bom=False)
    assert document.render([parse_tree("<s1>label</s1> hier")]).decode() == "[label] hier$"
    assert document.render([parse_tree("<s1>Etikett</s1> hier")]).decode() == "[Etikett][label] hier$"


def test_quote_and_spaces_outside_tags():
    pieces = UnitPieces()
    pieces.text("Logo", "Logo")
    doc, _ = build(pieces, quote='"')
    document = doc.build(bom=False)
    assert document.render([("Logo",)]) == b"Logo"
    assert document.render([("Das Logo",)]) == b'"^Das Logo$"'
    pieces = UnitPieces()
    pieces.text("a ", "a ")
    key = pieces.open(("**",))
    pieces.text("b", "b")
    pieces.close(key, ("**",))
    document = build(pieces, spaces_outside_tags=True)[0].build(bom=False)
    assert document.render([parse_tree("x<s1> y </s1>")]) == b"^x **y** "


def test_render_refuses_a_wrong_number_of_translations_or_a_foreign_tag():
    document = build(sentence())[0].build(bom=False)
    with pytest.raises(InvalidInputError, match="expected 1 translations"):
        document.render([])
    with pytest.raises(InvalidInputError, match="<s7> is not a tag of this unit"):
        document.render([parse_tree("<s7>x</s7>")])


def test_units_placed_since_a_checkpoint_can_be_discarded():
    doc = DocumentBuilder("kept dropped")
    doc.literal(doc.place([Text("kept", "kept")], offset=0, escape=escape, label=""))
    checkpoint = doc.checkpoint()
    doc.place([Text("dropped", "dropped")], offset=5, escape=escape, label="")
    doc.discard_since(checkpoint)
    doc.literal(" dropped")
    document = doc.build(bom=False)
    assert [unit.text for unit in document.units] == ["kept"]
    assert document.render([("behalten",)]) == b"^behalten$ dropped"
