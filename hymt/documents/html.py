"""HTML: the text between block elements as units, inline markup as numbered tags.

`<p>Please <b>do not</b> reply.</p>` is one unit, `Please <s1>do not</s1> reply.`: inline
elements (html_elements.INLINE, `<br>` and `<img>` included) are tags of the sentence and
every other element separates units. Text reaches the model decoded (`&amp;` as `&`) with
its whitespace runs read as one space; a translation is escaped for where it goes. Text
attributes (alt, title, placeholder, aria-label, button values, page descriptions) are
units of their own. Scripts, styles, code, preformatted text, form field contents,
templates, comments and anything under `translate="no"` or class `notranslate` are never
sent. Every byte outside the units' text is written back as it was.
"""
from __future__ import annotations

import html
import re

from hymt.documents.document_builder import DocumentBuilder, UnitPieces
from hymt.documents.html_elements import (
    CLOSED_BY,
    INLINE,
    OPAQUE_BLOCK,
    OPAQUE_INLINE,
    VOID,
    no_translate,
    text_attribute_names,
)
from hymt.documents.html_tokens import HtmlToken, tokenize
from hymt.documents.text_document import Slot, Template, TextDocument, decode_text
from hymt.documents.units import DocumentFormat, TagRules

NAME = "html"

_WORDS = re.compile(r"[ \t\n\r\f]+|[^ \t\n\r\f]+")
_WHITESPACE = re.compile(r"[ \t\n\r\f]+")
# The attribute syntax html.parser accepts (after the tag name), with the value's quotes.
_TAG_NAME = re.compile(r"<[a-zA-Z][^\t\n\r\f />\x00]*(?:\s|/(?!>))*")
_ATTRIBUTE = re.compile(
    r"""((?<=['"\s/])[^\s/>][^\s/=>]*)(\s*=+\s*('[^']*'|"[^"]*"|(?!['"])[^>\s]*))?(?:\s|/(?!>))*"""
)


def escape_text(text: str, at_start: bool = False, at_end: bool = False) -> str:
    """Text for an element's content: `&`, `<` and `>` escaped."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def escape_attribute(text: str, at_start: bool = False, at_end: bool = False) -> str:
    """Text for a quoted attribute value: also both quotes escaped."""
    return html.escape(text, quote=True)


class _Walker:
    """Walks the tokens of one HTML text (or fragment at `base`) into a DocumentBuilder."""

    def __init__(self, text: str, doc: DocumentBuilder, base: int, rules: TagRules) -> None:
        self.text, self.doc, self.base, self.rules = text, doc, base, rules
        self.tokens = tokenize(text)
        self.elements: list[str] = []  # open elements, as far as a tolerant reading can tell
        self.run = UnitPieces()
        self.run_offset = -1  # where the current run's first word is
        self.open_inline: list[tuple[str, int]] = []  # open inline elements of the run: (tag, key)

    def source(self, token: HtmlToken) -> str:
        return self.text[token.start : token.end]

    def inline(self, tag: str) -> bool:
        """Whether `tag` travels inside its sentence (rules first: non-splitting and
        splitting elements, then, without outline detection, everything else too)."""
        rules = self.rules
        if tag in rules.non_splitting:
            return True
        if tag in rules.splitting:
            return False
        return tag in INLINE or not rules.outline_detection

    def walk(self) -> None:
        index = 0
        while index < len(self.tokens):
            token = self.tokens[index]
            if token.kind in ("start", "startend"):
                index = self.start_tag(index)
                continue
            if token.kind == "end":
                self.end_tag(token)
            elif token.kind == "data":
                self.data(token)
            else:
                self.run.void((self.source(token),))
            index += 1
        self.end_run()

    def data(self, token: HtmlToken) -> None:
        for match in _WORDS.finditer(self.source(token)):
            word = match.group(0)
            if _WHITESPACE.fullmatch(word):
                self.run.text(" ", word)
                continue
            if self.run_offset < 0:
                self.run_offset = token.start + match.start()
            self.run.text(html.unescape(word), word)

    def start_tag(self, index: int) -> int:
        token = self.tokens[index]
        tag = token.tag
        skip = no_translate(token.attrs) or tag in self.rules.ignore
        if skip or tag in OPAQUE_INLINE or tag in OPAQUE_BLOCK:
            end = index + 1 if token.kind == "startend" or tag in VOID else self.element_end(index)
            whole: Template = (self.source(token),) if skip else self.tag_markup(token)
            if end > index + 1:
                whole += (self.text[token.end : self.tokens[end - 1].end],)
            if self.inline(tag) or tag in OPAQUE_INLINE:
                self.run.void(whole)
            else:
                self.end_run()
                self.doc.literal(whole)
            return end
        markup = self.tag_markup(token)
        if self.inline(tag):
            if token.kind == "startend" or tag in VOID:
                self.run.void(markup)
            else:
                self.open_inline.append((tag, self.run.open(markup)))
        else:
            self.end_run()
            self.doc.literal(markup)
        if token.kind == "start" and tag not in VOID:
            while self.elements and tag in CLOSED_BY.get(self.elements[-1], ()):
                self.elements.pop()
            self.elements.append(tag)
        return index + 1

    def end_tag(self, token: HtmlToken) -> None:
        tag = token.tag
        if not self.inline(tag):
            self.end_run()
            self.doc.literal(self.source(token))
        elif self.open_inline and self.open_inline[-1][0] == tag:
            self.run.close(self.open_inline.pop()[1], (self.source(token),))
        else:
            self.run.void((self.source(token),))
        if tag in self.elements:
            del self.elements[len(self.elements) - 1 - self.elements[::-1].index(tag) :]

    def element_end(self, index: int) -> int:
        """The index after the element starting at `index`: after its end tag, or before the
        tag that ends it implicitly (an end tag of an element around it, a start tag that
        closes it), or the end of the document."""
        tag = self.tokens[index].tag
        around = set(self.elements)
        depth = 1
        for later in range(index + 1, len(self.tokens)):
            token = self.tokens[later]
            if token.kind == "start" and depth == 1 and token.tag in CLOSED_BY.get(tag, ()):
                return later
            if token.kind == "start" and token.tag == tag:
                depth += 1
            elif token.kind == "end" and token.tag == tag:
                depth -= 1
                if depth == 0:
                    return later + 1
            elif token.kind == "end" and token.tag in around:
                return later
        return len(self.tokens)

    def end_run(self) -> None:
        if self.run:
            label = f"<{self.block()}>"
            offset = self.base + (self.run_offset if self.run_offset >= 0 else 0)
            self.doc.literal(self.doc.place(self.run.pieces, offset=offset, escape=escape_text, label=label))
        self.run = UnitPieces()
        self.run_offset = -1
        self.open_inline = []

    def block(self) -> str:
        for tag in reversed(self.elements):
            if not self.inline(tag):
                return tag
        return "body"

    def tag_markup(self, token: HtmlToken) -> Template:
        """The start tag's source, with its text attributes' values as units."""
        source = self.source(token)
        names = text_attribute_names(token.tag, token.attrs)
        found = _attribute_values(source)
        if [name for name, _, _ in found] != [name for name, _ in token.attrs]:
            return (source,)  # read differently from the parser: leave the tag as it is
        parts: list[str | Slot] = []
        pos = 0
        for (name, start, end), (_, value) in zip(found, token.attrs):
            if name not in names or not value or not value.strip():
                continue
            quoted = source[start] in ("'", '"')
            if quoted:
                start, end = start + 1, end - 1
            pieces = UnitPieces()
            pieces.text(_WHITESPACE.sub(" ", value).strip(), source[start:end])
            slot = self.doc.place(
                pieces.pieces,
                offset=self.base + token.start + start,
                escape=escape_attribute,
                label=f"<{token.tag} {name}>",
                split=False,
                quote="" if quoted else '"',
            )
            parts.extend((source[pos:start], *slot))
            pos = end
        parts.append(source[pos:])
        return tuple(part for part in parts if part != "")


def _attribute_values(source: str) -> list[tuple[str, int, int]]:
    """(lower-case name, start, end) of each attribute of a start tag; the range is the
    value with its quotes, or empty at the name's end for an attribute without value."""
    match = _TAG_NAME.match(source)
    if match is None:
        return []
    found: list[tuple[str, int, int]] = []
    pos = match.end()
    while pos < len(source):
        attribute = _ATTRIBUTE.match(source, pos)
        if attribute is None:
            break
        if attribute.group(3) is not None:
            found.append((attribute.group(1).lower(), attribute.start(3), attribute.end(3)))
        else:
            found.append((attribute.group(1).lower(), attribute.end(1), attribute.end(1)))
        pos = attribute.end()
    return found


def add_html(doc: DocumentBuilder, text: str, base: int = 0, rules: TagRules | None = None) -> None:
    """Adds HTML source (a whole page, or a fragment at offset `base` of a larger text)."""
    _Walker(text, doc, base, rules or TagRules()).walk()


def parse_with_rules(data: bytes, rules: TagRules) -> TextDocument:
    """`data` read with DeepL-style element rules: `ignore` elements are kept as they are,
    `splitting` ones end units, `non_splitting` ones travel inside the sentence."""
    text, bom = decode_text(data, NAME)
    doc = DocumentBuilder(text)
    add_html(doc, text, rules=rules)
    return doc.build(bom=bom)


def parse(data: bytes) -> TextDocument:
    return parse_with_rules(data, TagRules())


FORMAT = DocumentFormat(
    name=NAME, suffixes=(".html", ".htm", ".xhtml"), media_type="text/html", parse=parse, text=True,
    parse_with_rules=parse_with_rules,
)
