"""Numbered inline tags: parsing, checking a model's answer, fallback and rendering."""
from __future__ import annotations

import html

import pytest

from hymt.documents.inline_tags import (
    TagMismatch,
    balanced_pieces,
    check_answer,
    fallback_tree,
    join_trees,
    parse_tree,
    plain_text,
    render,
    tagged_text,
    tree_text,
)
from hymt.documents.units import TagNode

SOURCE = "Please <s1>do not</s1> reply<s2/> to <s3>this <s4>mail</s4></s3>."


def test_a_tree_round_trips_to_the_same_tagged_text():
    tree = parse_tree(SOURCE)
    assert tree[1] == TagNode(1, ("do not",))
    assert tree[3] == TagNode(2, (), void=True)
    assert tagged_text(tree) == SOURCE
    assert tree_text(tree) == "Please do not reply to this mail."


def test_an_answer_may_reorder_tags_but_must_keep_each_once():
    answer = "Bitte <s3>auf diese <s4>Mail</s4></s3><s2/> <s1>nicht</s1> antworten."
    tree = check_answer(answer, SOURCE)
    assert tagged_text(tree) == answer


@pytest.mark.parametrize(
    "answer, reason",
    [
        ("Bitte nicht antworten.", "missing <s1>, <s2>, <s3>, <s4>"),
        ("Bitte <s1>nicht</s1> <s3>auf <s4>Mail</s4></s3> antworten.", "missing <s2>"),
        ("<s1>a</s1><s1>b</s1><s2/><s3><s4>c</s4></s3>", "more than once"),
        ("<s1>a<s2/><s3><s4>c</s4></s3>", "never closed"),
        ("<s1>a</s3><s2/><s3><s4>c</s4>", "not open"),
        ("<s1>a</s1><s2/><s3><s4>c</s4></s3><s9>x</s9>", "unexpected <s9>"),
        ("<s1/><s2/><s3><s4>c</s4></s3>", "must be a pair"),
        ("<s1>a</s1><s2>b</s2><s3><s4>c</s4></s3>", "must be empty"),
    ],
)
def test_a_broken_answer_is_refused_with_the_reason(answer, reason):
    with pytest.raises(TagMismatch, match=reason):
        check_answer(answer, SOURCE)


def test_an_empty_pair_stands_for_a_void_tag():
    tree = check_answer("a<s1>b</s1><s2></s2><s3><s4>c</s4></s3>", SOURCE)
    assert tree[2] == TagNode(2, (), void=True)


def test_plain_text_keeps_words_apart_at_a_line_break():
    assert plain_text("one<s1/>two <s2>three</s2>") == "one two three"
    assert plain_text("one <s1/>two") == "one two"


def test_the_fallback_keeps_every_tag_around_the_plain_translation():
    tree = fallback_tree("Bitte nicht auf diese Mail antworten.", SOURCE)
    assert tagged_text(tree) == "<s1><s3><s4>Bitte nicht auf diese Mail antworten.</s4></s3></s1><s2/>"
    assert check_answer(tagged_text(tree), SOURCE) == tree


def test_the_fallback_of_an_untagged_sentence_is_the_translation():
    assert fallback_tree("Hallo.", "Hello.") == ("Hallo.",)


def test_render_escapes_text_and_restores_markup():
    markup = {1: ("<b>", "</b>"), 2: ("<br>", "")}
    tree = parse_tree("Tom & Jerry <3 <s1>x</s1><s2/>")
    out = render(tree, text=html.escape, open=lambda n: markup[n][0], close=lambda n: markup[n][1],
                 void=lambda n: markup[n][0])
    assert out == "Tom &amp; Jerry &lt;3 <b>x</b><br>"


def test_sentence_trees_join_with_their_separators():
    first, second = parse_tree("<s1>Eins.</s1>"), parse_tree("Zwei.")
    assert tagged_text(join_trees([(first, " "), (second, "\n")])) == "<s1>Eins.</s1> Zwei.\n"


def test_balanced_pieces_never_cut_a_paired_tag():
    pieces = [("<s1>One.", " "), ("Two.</s1>", " "), ("Three<s2/>.", " "), ("Four.", "")]
    merged = balanced_pieces(pieces)
    assert merged == [("<s1>One. Two.</s1>", " "), ("Three<s2/>.", " "), ("Four.", "")]
    assert "".join(a + b for a, b in merged) == "".join(a + b for a, b in pieces)
