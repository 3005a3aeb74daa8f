"""Shared test material for the text formats: fixtures, stand-in translations and random
documents. (A module with a unique name: pytest puts this directory on sys.path.)"""
from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from pathlib import Path

from hymt.documents.inline_tags import parse_tree
from hymt.documents.units import DocumentFormat, Node, ParsedDocument, TagNode, Tree

FIXTURES = Path(__file__).parent / "fixtures"


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def identity(doc: ParsedDocument) -> list[Tree]:
    """Each unit's own text as its translation."""
    return [parse_tree(unit.text) for unit in doc.units]


def map_text(tree: Tree, change: Callable[[str], str]) -> Tree:
    out: list[Node] = []
    for node in tree:
        if isinstance(node, str):
            out.append(change(node))
        else:
            out.append(TagNode(node.number, map_text(node.children, change), node.void))
    return tuple(out)


def translated(doc: ParsedDocument, change: Callable[[str], str] = str.upper) -> list[Tree]:
    """A stand-in translation: every text node changed by `change`, tags kept."""
    return [map_text(tree, change) for tree in identity(doc)]


def texts(doc: ParsedDocument) -> list[str]:
    return [unit.text for unit in doc.units]


def random_document(rng: random.Random, pieces: Sequence[str], *, most: int = 60) -> bytes:
    return "".join(rng.choice(pieces) for _ in range(rng.randint(1, most))).encode("utf-8")


#: Pieces random documents are made of: prose, every format's markup, broken markup,
#: entities, line endings, wide characters, and text that looks like our own tags.
FUZZ_PIECES = (
    "a", "word ", "Text", " ", "  ", "\n", "\r\n", "\r", "\t", "\n\n", "*", "**", "_", "`", "```", "~~",
    "[", "]", "(", ")", "!", "<", ">", "&", "&amp;", "&#39;", "&lt;", "&nbsp;", "\\", "#", "# ", "- ",
    "1. ", "> ", "|", "---", "$", "$$", "^", "[^1]", "[^1]: ", "<b>", "</b>", "<p>", "</p>", "<br>",
    "<img alt='x y' src=a>", "<a href='u'>", "</a>", "<!--", "-->", "<script>", "</script>", "<pre>",
    "</pre>", "<code>", "</code>", '"', "'", "=", "<s1>", "</s1>", "<s2/>", "中文", "。", "日本語",
    "\u00a0", "\ufeff", "\0", "http://x.y", "    ", "<div title=t>", "</div>", "<![CDATA[", "]]>",
    "<?x ?>", "<!DOCTYPE html>", "\\|", "[x] ", "[ref]", "[ref]: /u", "<http://a.b>", "\u3000", "é",
    "e\u0301", "<span class=notranslate>", "</span>", "<meta name=description content='hi there'>",
    "<input type=submit value=Go>", "<title>", "</title>", "<li>", "<td>", "=== ", "+++", "~~~",
    "</>", "<DIV CLASS=x>", "<br/>", "<p translate=no>", "a.k.a.", "Über", "한국어",
)


def assert_round_trips(fmt: DocumentFormat, data: bytes) -> ParsedDocument:
    """Parses `data`; identity translation gives it back byte for byte, and a translation of
    every text node renders without error."""
    doc = fmt.parse(data)
    assert doc.render(identity(doc)) == data
    doc.render(translated(doc, lambda text: text.upper() + " <&>\"'*_[]`$|#\\ "))
    return doc
