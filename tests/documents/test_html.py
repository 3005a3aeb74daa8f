"""HTML: sentences whole with their inline markup, text attributes, untouched bytes."""
from __future__ import annotations

import random
from html.parser import HTMLParser

import pytest
from format_samples import FUZZ_PIECES, assert_round_trips, fixture, identity, random_document, texts, translated

from hymt.documents.html import FORMAT
from hymt.documents.html_elements import TEXT_ATTRIBUTES
from hymt.documents.inline_tags import parse_tree
from hymt.errors import InvalidDocumentError

PAGE_UNITS = [
    "Tom & Jerry — Episode Guide",
    "Every episode of the classic cartoon, with air dates.",
    "Tom & Jerry episode guide",
    'The cat, the mouse & the "chase".',
    "Back to the home page",
    "<s1>Home</s1> | <s2>Episodes</s2> | <s3>About us</s3>",
    "Tom and Jerry logo",
    "The <s1>complete</s1> episode guide",
    "Introduction",
    "Please <s1>do not</s1> copy these pages. Tom & Jerry <3 each other, in their own way.",
    "Written by <s1>Ann Smith</s1><s2/> Updated on <s3>1 May 2024</s3>.",
    "Episodes marked with a star were <s1>never</s1> released on DVD.",
    "Run <s1/> to print the list, then press <s2/>+<s3/>.",
    "The studio is <s1/>, founded in 1924.",
    "Title",
    "Year",
    "Puss Gets the Boot",
    "also known as",
    "<s1>a.k.a.</s1> The Midnight Snack",
    "First season",
    "Second season",
    "Search the guide:",
    "Episode title",
    "Search episodes",
    "Search",
    "Your comment",
    "Clear",
    "Oldest first",
    "Newest first",
    "© 2024 Example\u00a0Studios. All rights reserved.",
]


class _Structure(HTMLParser):
    """Tags and attributes as a browser would see them; text attribute values left out."""

    def __init__(self) -> None:
        super().__init__()
        self.items: list[tuple[object, ...]] = []

    def handle_starttag(self, tag, attrs):
        self.items.append(("start", tag, tuple((n, None if n in TEXT_ATTRIBUTES | {"content", "value"} else v)
                                               for n, v in attrs)))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag):
        self.items.append(("end", tag))

    def handle_comment(self, data):
        self.items.append(("comment", data))


def structure(data: bytes) -> list[tuple[object, ...]]:
    parser = _Structure()
    parser.feed(data.decode("utf-8-sig"))
    parser.close()
    return parser.items


def test_page_units():
    doc = FORMAT.parse(fixture("page.html"))
    assert texts(doc) == PAGE_UNITS
    assert doc.units[9].where == "<p>, line 34"
    assert doc.units[4].where == "<a title>, line 23"


def test_page_round_trips_byte_for_byte():
    assert_round_trips(FORMAT, fixture("page.html"))


def test_random_documents_round_trip():
    rng = random.Random(11)
    for _ in range(300):
        assert_round_trips(FORMAT, random_document(rng, FUZZ_PIECES))


def test_a_translation_keeps_every_tag_attribute_and_comment():
    doc = FORMAT.parse(fixture("page.html"))
    out = doc.render(translated(doc, lambda text: text.upper() + ' </p> & "quoted" <b>'))
    assert structure(out) == structure(fixture("page.html"))
    page = out.decode()
    assert '<title>TOM &amp; JERRY — EPISODE GUIDE &lt;/p&gt; &amp; "quoted" &lt;b&gt;</title>' in page
    assert 'alt="TOM AND JERRY LOGO &lt;/p&gt; &amp; &quot;quoted&quot; &lt;b&gt;" width=120' in page
    assert "content='THE CAT, THE MOUSE &amp; THE &quot;CHASE&quot;." in page
    assert '<a href="/" title="BACK TO THE HOME PAGE' in page
    assert '<meta name="keywords" content="cartoon, cat, mouse">' in page
    assert '<input type="hidden" name="lang" value="en">' in page
    assert "Default text stays" in page and "Template text" in page and "Quoted as written." in page
    assert "<code>guide --list</code>" in page and '<span class="notranslate">Metro-Goldwyn-Mayer</span>' in page


def test_inline_elements_keep_the_sentence_whole():
    doc = FORMAT.parse(b"<p>Please <b>do not</b> reply.</p>")
    assert texts(doc) == ["Please <s1>do not</s1> reply."]  # the old parser sent three pieces
    assert doc.render(translated(doc)) == b"<p>PLEASE <b>DO NOT</b> REPLY.</p>"


def test_a_line_break_inside_a_paragraph_is_a_void_tag():
    doc = FORMAT.parse(b"<p>John Smith<br>12 Main St<BR/>Springfield</p>")
    assert texts(doc) == ["John Smith<s1/>12 Main St<s2/>Springfield"]
    reordered = (parse_tree("Springfield<s2/>12 Main St<s1/>John Smith"),)
    assert doc.render(reordered) == b"<p>Springfield<BR/>12 Main St<br>John Smith</p>"


def test_entities_are_decoded_and_translations_escaped():
    doc = FORMAT.parse(b"<p>Tom &amp; Jerry &lt;3 &#x41;</p>")
    assert texts(doc) == ["Tom & Jerry <3 A"]
    assert doc.render(identity(doc)) == b"<p>Tom &amp; Jerry &lt;3 &#x41;</p>"
    attack = (("</p><script>alert(1)</script> & more",),)
    assert doc.render(attack) == b"<p>&lt;/p&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp; more</p>"


def test_a_quoted_gt_does_not_end_the_tag():
    doc = FORMAT.parse(b"<div data-x='1 > 0'>Text</div>")
    assert texts(doc) == ["Text"]  # the old scanner sent "0'>Text"


@pytest.mark.parametrize(
    "source, expected",
    [
        (b"<img src=a.png alt=Logo>", b'<img src=a.png alt="LOGO &quot;X&quot;">'),
        (b"<img alt='Logo' src=a.png>", b"<img alt='LOGO &quot;X&quot;' src=a.png>"),
        (b'<abbr title="as known">aka</abbr>', b'<abbr title="AS KNOWN &quot;X&quot;">AKA "X"</abbr>'),
    ],
)
def test_text_attributes_are_units_escaped_for_their_quotes(source, expected):
    doc = FORMAT.parse(source)
    assert doc.render(translated(doc, lambda text: text.upper() + ' "X"')) == expected


def test_attribute_units_are_never_split_into_sentences():
    doc = FORMAT.parse(b'<p title="Click here. Then wait.">One. Two.</p>')
    assert [(unit.text, unit.split) for unit in doc.units] == [("Click here. Then wait.", False), ("One. Two.", True)]


def test_which_attributes_are_units():
    page = (
        b'<input type=button value="Go on"><input type=text value="typed by user">'
        b'<button value="code">Press</button><a href="/about us" title="More about us">x</a>'
        b'<meta name="description" content="Page text"><meta name="author" content="Ann Smith">'
        b'<meta property="og:description" content="Shared text"><div data-label="Not this" aria-label="Menu">'
    )
    assert texts(FORMAT.parse(page)) == [
        "Go on", "Press", "More about us", "x", "Page text", "Shared text", "Menu",
    ]


@pytest.mark.parametrize(
    "source",
    [
        b"<script>var message = 'Hello world';</script>",
        b"<SCRIPT>document.write('<p>Hello world</p>')</SCRIPT>",
        b"<style>p::before { content: 'Hello world' }</style>",
        b"<pre>Hello world</pre>",
        b"<PRE>Hello <b>world</b></PRE>",
        b"<textarea>Hello world</textarea>",
        b"<template><p>Hello world</p></template>",
        b"<!-- Hello world -->",
        b"<p translate=\"no\">Hello <b>world</b></p>",
        b"<div class=\"box notranslate\"><p>Hello world</p><img alt=\"Hello world\"></div>",
        b"<svg><text>Hello world</text></svg>",
        b"<p><code>Hello world</code></p>",
        b"<script>var unclosed = 'Hello world';",
    ],
)
def test_never_translated(source):
    doc = assert_round_trips(FORMAT, source)
    assert texts(doc) == []


def test_an_untranslated_element_inside_a_sentence_is_a_void_tag():
    doc = FORMAT.parse(b'<p>Made by <span translate="no">ACME <b>Tools</b></span> in 1990.</p>')
    assert texts(doc) == ["Made by <s1/> in 1990."]
    assert doc.render(translated(doc)) == b'<p>MADE BY <span translate="no">ACME <b>Tools</b></span> IN 1990.</p>'


@pytest.mark.parametrize(
    "source, expected",
    [
        (b"<p>Unclosed <b>bold text</p><p>Next", ["Unclosed <s1/>bold text", "Next"]),
        (b"<P>Upper <B>case</B></P>", ["Upper <s1>case</s1>"]),
        (b"<p>a <b>b <i>c</b> d</i></p>", ["a <s1/>b <s2>c<s3/> d</s2>"]),
        (b"<p>stray</b> close</p>", ["stray<s1/> close"]),
        (b"<p>self <span/> closing</p>", ["self <s1/> closing"]),
        (b"<!DOCTYPE html><?xml version='1.0'?><![CDATA[x < y]]><p>After</p>", ["After"]),
        (b"<p>Empty </> tag</p>", ["Empty <s1/> tag"]),
        (b"<p>Broken <div class=\"x", ["Broken"]),
        (b"a < b and c > d", ["a < b and c > d"]),
    ],
)
def test_malformed_markup_never_loses_bytes(source, expected):
    doc = assert_round_trips(FORMAT, source)
    assert texts(doc) == expected


def test_whitespace_and_numbers_are_not_units():
    doc = FORMAT.parse(b"<p>  \n </p><td>1,024</td><p>&nbsp;</p><p>https://example.com</p><p>42 km</p>")
    assert texts(doc) == ["42 km"]


def test_text_that_looks_like_a_tag_is_not_one():
    doc = FORMAT.parse(b"<p>Type &lt;s1&gt; here</p>")
    assert texts(doc) == ["Type <s1/> here"]
    assert doc.render(translated(doc)) == b"<p>TYPE &lt;s1&gt; HERE</p>"


def test_invalid_utf8_is_an_error_naming_the_format():
    with pytest.raises(InvalidDocumentError, match="html document is not valid UTF-8"):
        FORMAT.parse(b"<p>caf\xe9</p>")
