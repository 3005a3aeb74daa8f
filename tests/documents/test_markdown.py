"""Markdown: blocks as units with their inline markup as tags; the source's bytes kept."""
from __future__ import annotations

import random

import pytest
from format_samples import FUZZ_PIECES, assert_round_trips, fixture, identity, random_document, texts, translated

from hymt.documents.inline_tags import parse_tree
from hymt.documents.markdown import FORMAT, parser
from hymt.errors import InvalidDocumentError

README_UNITS = [
    "Episode guide",
    "The guide lists every episode of the cartoon with its air date. It is maintained by volunteers and "
    "updated <s1>every week</s1>, so please check back often.",
    "Install it with <s1/> and run <s2/>. See the <s3>full documentation</s3> or the <s4>FAQ</s4> for more, "
    "and report problems at <s5/>.",
    "Getting started",
    "Download the archive.",
    "Unpack it <s1>somewhere</s1> safe. The folder name does not matter.",
    "Run the installer:",
    "Season one is complete",
    "Season two is <s1>finished</s1> in progress",
    "<s1>Note:</s1> the episode titles are the original ones, not the titles of later releases.",
    "Episode",
    "Year",
    "Notes",
    "Puss Gets the Boot",
    "The <s1>first</s1> one",
    "The Midnight Snack",
    "Also known as a | b",
    "The ratio is <s1/> and it costs $5 to $10.",
    "Raw <s1>HTML</s1> blocks are translated too.",
    "The cat chasing the mouse",
    "Line one ends with two spaces<s1/>line two follows.",
    "Titles follow the studio's own records.",
]

def structure(data: bytes) -> list[tuple[object, ...]]:
    """Block and inline tokens with their markup and targets, without text."""
    items: list[tuple[object, ...]] = []
    for token in parser().parse(data.decode("utf-8-sig")):
        items.append((token.type, token.tag, token.markup, token.info))
        for child in token.children or []:
            if child.type not in ("text", "softbreak", "text_special"):
                attrs = {k: v for k, v in (child.attrs or {}).items() if k != "alt"}
                items.append((child.type, child.markup, tuple(sorted(attrs.items())),
                              child.content if child.type == "code_inline" else ""))
    return items


def test_readme_units():
    doc = FORMAT.parse(fixture("readme.md"))
    assert texts(doc) == README_UNITS
    assert [doc.units[0].where, doc.units[1].where, doc.units[10].where] == [
        "heading, line 7", "paragraph, line 9", "table cell, line 35"
    ]


def test_readme_round_trips_byte_for_byte():
    assert_round_trips(FORMAT, fixture("readme.md"))


@pytest.mark.parametrize("ending", ["\r\n", "\r"])
def test_line_endings_and_a_bom_round_trip(ending):
    data = ("\ufeff" + fixture("readme.md").decode().replace("\n", ending)).encode()
    assert texts(assert_round_trips(FORMAT, data)) == README_UNITS


def test_random_documents_round_trip():
    rng = random.Random(3)
    for _ in range(300):
        assert_round_trips(FORMAT, random_document(rng, FUZZ_PIECES))


def test_a_translation_keeps_the_markup_and_targets():
    source = fixture("readme.md")
    doc = FORMAT.parse(source)
    hostile = " *not emphasis* _no_ [no](link) `no code` $no math$ ~~no~~ <b>no</b> &amp; | \\ #"
    out = doc.render(translated(doc, lambda text: text.upper() + hostile))
    assert structure(out) == structure(source)
    page = out.decode()
    assert page.startswith(fixture("readme.md").decode().split("# Episode")[0])  # front matter as it was
    assert "[FULL DOCUMENTATION \\*not emphasis" in page and '](https://example.com/docs "Docs")' in page
    assert "```sh\n   ./install --prefix ~/.local\n   ```" in page
    assert "\n$$\nE = mc^2\n$$\n" in page and "<!-- maintainers: keep this list sorted -->" in page
    assert "    indented code is kept\n    exactly as written\n" in page
    assert "[FAQ]: https://example.com/faq" in page


def test_a_wrapped_paragraph_is_one_unit_and_comes_back_as_one_line():
    doc = FORMAT.parse(b"> Some text that\n> wraps over *two\n> lines*.\n")
    assert texts(doc) == ["Some text that wraps over <s1>two lines</s1>."]
    assert doc.render(translated(doc)) == b"> SOME TEXT THAT WRAPS OVER *TWO LINES*.\n"


def test_inline_code_and_link_targets_are_kept_and_not_sent():
    doc = FORMAT.parse(b"Run `rm -rf build` and read [the guide](https://example.com/a_b \"Guide\").\n")
    assert texts(doc) == ["Run <s1/> and read <s2>the guide</s2>."]
    answer = (parse_tree("Lies <s2>die Anleitung</s2> und führe <s1/> aus."),)
    assert doc.render(answer) == (
        b"Lies [die Anleitung](https://example.com/a_b \"Guide\") und f\xc3\xbchre `rm -rf build` aus.\n"
    )


def test_a_reference_link_keeps_its_label_when_its_text_is_translated():
    source = b"See [the FAQ] and [the FAQ][] and [docs][d].\n\n[the faq]: /faq\n[d]: /docs\n"
    doc = FORMAT.parse(source)
    assert texts(doc) == ["See <s1>the FAQ</s1> and <s2>the FAQ</s2> and <s3>docs</s3>."]
    out = doc.render(translated(doc))
    assert out.startswith(b"SEE [THE FAQ][the FAQ] AND [THE FAQ][the FAQ] AND [DOCS][d].")
    assert structure(out) == structure(source)


def test_image_alt_text_is_a_unit_of_its_own():
    doc = FORMAT.parse(b"A picture: ![a *red* cat](cat.png) here.\n\n![ref alt]\n\n[ref alt]: /x.png\n")
    assert texts(doc) == ["A picture: <s1/> here.", "a red cat"]
    assert doc.render(translated(doc)) == b"A PICTURE: ![A RED CAT](cat.png) HERE.\n\n![ref alt]\n\n[ref alt]: /x.png\n"


@pytest.mark.parametrize(
    "source",
    [
        b"```python\nprint('Hello world')\n```\n",
        b"~~~\nHello world\n~~~\n",
        b"    Hello world in an indented code block\n",
        b"- ```\n  Hello world in a list\n  ```\n",
        b"<!-- Hello world -->\n",
        b"---\ntitle: Hello world\n---\n",
        b"$$\n\\text{Hello world}\n$$\n",
        b"[Hello world]: https://example.com\n",
        b"***\n",
        b"`Hello world`\n",
        b"$Hello_world$\n",
        b"<https://example.com/hello-world>\n",
        b"> <div>\n> Hello world\n> </div>\n",
    ],
)
def test_never_translated(source):
    doc = assert_round_trips(FORMAT, source)
    assert texts(doc) == []


def test_headings_lists_quotes_tables_and_footnotes_are_units_without_markers():
    source = (
        b"## Title ##\n\nSetext\n===\n\n- [ ] a task\n  1. nested item\n\n> quoted\n\n"
        b"| a | b \\| c |\n|---|---|\n| `x` | **y** |\n\nText[^n].\n\n[^n]: The note.\n"
    )
    doc = assert_round_trips(FORMAT, source)
    assert texts(doc) == [
        "Title", "Setext", "a task", "nested item", "quoted", "a", "b | c", "y", "Text<s1/>.", "The note."
    ]
    out = doc.render(translated(doc, lambda text: text.upper() + " | #"))
    assert out.startswith(b"## TITLE | \\# ##\n\nSETEXT | \\#\n===\n\n- [ ] A TASK | \\#\n  1. NESTED")
    assert b"| A \\| \\# | B \\| C \\| \\# |\n|---|---|\n| `x` | **Y \\| \\#** |" in out
    assert out.endswith(b"[^n]: THE NOTE. | \\#\n")  # a pipe needs escaping only in a table
    assert structure(out) == structure(source)


def test_a_translation_cannot_start_a_new_block():
    doc = FORMAT.parse(b"- item\n\nparagraph\n")
    answers = [("- not a list",), ("# not a heading\n\n1. not a list",)]
    out = doc.render(answers)
    assert out == b"- \\- not a list\n\n\\# not a heading 1. not a list\n"
    assert structure(out) == structure(b"- item\n\nparagraph\n")


def test_spaces_at_the_ends_of_emphasis_move_outside_it():
    doc = FORMAT.parse(b"Some **bold** text.\n")
    assert doc.render((parse_tree("Ein <s1> fetter </s1>Text."),)) == b"Ein  **fetter** Text.\n"
    doc = FORMAT.parse(b"Read **[the docs](./docs/)** now.\n")
    out = doc.render((parse_tree("Lies <s1><s2>die Doku </s2></s1>jetzt."),))
    assert out == b"Lies **[die Doku](./docs/)** jetzt.\n"


def test_only_paragraphs_may_be_split_into_sentences():
    doc = FORMAT.parse(b"A paragraph. Two sentences.\n\n| Cell. Two. |\n|---|\n\n![Alt. Text.](a.png)\n")
    assert [(unit.text, unit.split) for unit in doc.units] == [
        ("A paragraph. Two sentences.", True), ("Cell. Two.", False), ("Alt. Text.", False)
    ]


def test_a_hard_break_is_a_void_tag():
    doc = FORMAT.parse(b"Line one\\\nline two  \nline three\n")
    assert texts(doc) == ["Line one<s1/>line two<s2/>line three"]
    assert doc.render(translated(doc)) == b"LINE ONE\\\nLINE TWO  \nLINE THREE\n"


def test_cjk_lines_of_a_paragraph_join_without_a_space():
    doc = FORMAT.parse("第一行的文字\n第二行的文字\nand English\n".encode())
    assert texts(doc) == ["第一行的文字第二行的文字 and English"]


def test_inline_html_pairs_become_paired_tags():
    doc = FORMAT.parse(b"Press <kbd>Ctrl</kbd> and <span>this <em>one</span></em> now<br>.\n")
    # </span> closes across <em>: it and its <span> stay void tags, <em> is still a pair
    assert texts(doc) == ["Press <s1>Ctrl</s1> and <s2/>this <s3>one<s4/></s3> now<s5/>."]


def test_html_blocks_go_through_the_html_format():
    doc = FORMAT.parse(b'<p align="center">Hello <b>world</b> &amp; all</p>\n\nText.\n')
    assert texts(doc) == ["Hello <s1>world</s1> & all", "Text."]
    assert doc.render(translated(doc)).startswith(b'<p align="center">HELLO <b>WORLD</b> &amp; ALL</p>')


def test_text_that_looks_like_a_tag_is_not_one():
    doc = FORMAT.parse(b"Write <s1> or \\<s2/> literally.\n")
    assert texts(doc) == ["Write <s1/> or <s2/> literally."]
    assert doc.render(identity(doc)) == b"Write <s1> or \\<s2/> literally.\n"


def test_invalid_utf8_is_an_error_naming_the_format():
    with pytest.raises(InvalidDocumentError, match="markdown document is not valid UTF-8"):
        FORMAT.parse(b"# caf\xe9\n")
