"""XML text and fragments ("xml"): DeepL's `tag_handling=xml`, and .xml files.

The input may be a whole document or a fragment (`Press <b>Save</b>.`, several top-level
elements, text around them). Expat reads it (wrapped in an element of hymt's own when it is a
fragment) and reports where every token starts, so each tag, comment and text run keeps its
exact source: whatever is not translated is written back byte for byte. Defused: a DOCTYPE
or ENTITY declaration is refused, so no entity is ever expanded and no DTD read; only XML's
five entities and character references are decoded. Input must be UTF-8.

Units (TagRules, DeepL's options):
- outline detection on (the default): an element with text of its own (not only whitespace)
  is one unit, its child elements inline tags; an element with only elements and whitespace
  inside is structure, each child on its own. Consecutive `non_splitting` children of a
  structural element join one unit (DeepL's `<par>` example).
- outline detection off: only `splitting` elements (and the input's edges) end units;
  every other element is an inline tag.
- `splitting` elements always end a unit, and so do their ancestors' tags (a tag cannot be
  cut in two); `non_splitting` elements never do, unless they hold a splitting one.
- `ignore` elements, and elements with `translate="no"`, are never translated: kept byte for
  byte, as a void tag inside a unit. Comments, processing instructions and CDATA sections
  are kept the same way.
- Attributes are never translated. Whitespace around a unit stays outside it.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from xml.parsers import expat

from hymt.documents.inline_tags import parse_tree, render
from hymt.documents.placeholders import Syntax
from hymt.documents.safety import check_size
from hymt.documents.unit_text import Literal, UnitText
from hymt.documents.units import DocumentFormat, ParsedDocument, TagRules, Tree, Unit
from hymt.errors import InvalidDocumentError

NAME = "xml"
#: The deepest element nesting read (the layout walks the tree recursively, a few frames a level).
MAX_DEPTH = 200
_WRAP_OPEN, _WRAP_CLOSE = b"<hymt-fragment>", b"</hymt-fragment>"
_PROLOG = re.compile(rb"\A(?:\xef\xbb\xbf)?(?:<\?xml\s[^>]*\?>)?")
_DECLARATION = re.compile(rb"<!DOCTYPE|<!ENTITY", re.IGNORECASE)


@dataclass
class _Text:
    source: str
    text: str


@dataclass
class _Opaque:
    """A comment, processing instruction or CDATA section: kept as it is."""

    source: str


@dataclass
class _Element:
    name: str
    attributes: dict[str, str]
    open: str
    close: str = ""  # "" for an empty-element tag (`<br/>`)
    children: list[_Node] = field(default_factory=list)

    @property
    def source(self) -> str:
        return self.open + _source(self.children) + self.close


_Node = _Text | _Opaque | _Element


@dataclass(frozen=True)
class _Markup:
    """An element's tags as written (`open` alone for a void tag: the whole element)."""

    open: str
    close: str = ""


@dataclass(frozen=True)
class _Slot:
    """Where unit `index` goes, with the whitespace kept around it and the unit's own source
    (written back when the translation leaves the unit as it was)."""

    index: int
    lead: str
    trail: str
    source: str


def _source(nodes: Sequence[_Node]) -> str:
    return "".join(node.source for node in nodes)


# Characters XML 1.0 cannot carry at all, not even as references: a model's answer may hold them.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _escape(text: str) -> str:
    text = _NOT_XML.sub("", text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _read(data: bytes) -> tuple[str, list[_Node]]:
    """The prolog (BOM, XML declaration) and the nodes after it."""
    check_size(data, NAME)
    prolog_match = _PROLOG.match(data)
    prolog = prolog_match.group(0) if prolog_match else b""
    body = data[len(prolog):]
    if _DECLARATION.search(body):
        raise InvalidDocumentError(f"{NAME}: the text declares a DOCTYPE or entities, which hymt refuses",
                                   field="text")
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidDocumentError(f"{NAME}: the text is not UTF-8 ({exc})", field="text") from None
    events = _events(body)
    return prolog.decode("utf-8"), _tree(body, events)


def _events(body: bytes) -> list[tuple[str, int, tuple]]:
    """(kind, byte offset in `body`, handler arguments) of every token, wrapper included."""
    parser = expat.ParserCreate("utf-8")
    events: list[tuple[str, int, tuple]] = []
    shift = len(_WRAP_OPEN)

    def on(kind: str) -> Callable[..., None]:
        return lambda *args: events.append((kind, parser.CurrentByteIndex - shift, args))

    parser.StartElementHandler = on("start")
    parser.EndElementHandler = on("end")
    parser.CharacterDataHandler = on("text")
    parser.CommentHandler = on("opaque")
    parser.ProcessingInstructionHandler = on("opaque")
    parser.StartCdataSectionHandler = on("cdata")
    parser.EndCdataSectionHandler = on("cdata_end")
    try:
        parser.Parse(_WRAP_OPEN + body + _WRAP_CLOSE, True)
    except expat.ExpatError as exc:
        where = max(parser.ErrorByteIndex - shift, 0)
        if where >= len(body):  # at the wrapper's end tag: something the text opened is never closed
            raise InvalidDocumentError(f"{NAME}: not well-formed: an element is not closed by the end of the text",
                                       field="text") from None
        line = body[:where].count(b"\n") + 1
        column = where - (body.rfind(b"\n", 0, where) + 1) + 1
        message = expat.ErrorString(exc.code) if exc.code is not None else str(exc)
        raise InvalidDocumentError(f"{NAME}: not well-formed at line {line}, column {column}: {message}",
                                   field="text") from None
    return events


def _tree(body: bytes, events: list[tuple[str, int, tuple]]) -> list[_Node]:
    """Nodes from the events: each token spans from its offset to the next token's."""
    root = _Element("", {}, "")
    stack = [root]
    i = 1  # events[0] is the wrapper's start tag, events[-1] its end tag
    while i < len(events) - 1:
        kind, start, payload = events[i]
        first = i
        if kind == "text":  # a text run arrives in pieces
            while events[i + 1][0] == "text":
                i += 1
        elif kind == "cdata":  # one node up to its end marker
            while events[i][0] != "cdata_end":
                i += 1
        source = body[start:events[i + 1][1]].decode("utf-8")
        parent = stack[-1]
        if kind == "text":
            parent.children.append(_Text(source, "".join(e[2][0] for e in events[first:i + 1])))
        elif kind in ("cdata", "opaque"):
            parent.children.append(_Opaque(source))
        elif kind == "start":
            element = _Element(payload[0], payload[1], source)
            parent.children.append(element)
            if events[i + 1][0] == "end" and source.endswith("/>"):
                i += 1  # an empty-element tag: its end event has no bytes of its own
            else:
                stack.append(element)
                if len(stack) - 1 > MAX_DEPTH:  # stack[0] is the input itself
                    raise InvalidDocumentError(f"{NAME}: elements nest deeper than {MAX_DEPTH} levels",
                                               field="text")
        else:  # "end"
            stack.pop().close = source
        i += 1
    return root.children


class _Rules:
    """TagRules applied to elements (memoised: each element is asked about once)."""

    def __init__(self, rules: TagRules) -> None:
        self.rules = rules
        self._splits: dict[int, bool] = {}

    def ignored(self, element: _Element) -> bool:
        return element.name in self.rules.ignore or element.attributes.get("translate", "").strip().lower() == "no"

    def splits(self, element: _Element) -> bool:
        """Whether the element ends units: it splits, or holds an element that does."""
        key = id(element)
        if key not in self._splits:
            self._splits[key] = not self.ignored(element) and (
                element.name in self.rules.splitting
                or any(self.splits(child) for child in element.children if isinstance(child, _Element)))
        return self._splits[key]

    def joins(self, element: _Element) -> bool:
        """A child of a structural element that joins its non-splitting neighbours' unit."""
        return element.name in self.rules.non_splitting and not self.ignored(element)


class _Layout:
    """The document as kept text and unit slots, in order."""

    def __init__(self, rules: TagRules) -> None:
        self.rules = _Rules(rules)
        self.pieces: list[str | _Slot] = []
        self.units: list[Unit] = []
        self.markups: list[dict[int, _Markup | Literal]] = []

    def keep(self, text: str) -> None:
        if not text:
            return
        if self.pieces and isinstance(self.pieces[-1], str):
            self.pieces[-1] += text
        else:
            self.pieces.append(text)

    def container(self, name: str, children: Sequence[_Node]) -> None:
        """The children of a structural element (or of the input itself)."""
        inline = not self.rules.rules.outline_detection or any(
            isinstance(child, _Text) and child.text.strip() for child in children)
        run: list[_Node] = []
        pending: list[_Node] = []  # structural mode: whitespace and kept nodes after the run
        for child in children:
            element = child if isinstance(child, _Element) else None
            if element is not None and self.rules.splits(element):
                self.unit(name, run)
                self.keep(_source(pending))
                run, pending = [], []
                self.structure(element)
            elif inline:
                run.append(child)
            elif element is not None and self.rules.joins(element):
                if run:
                    run.extend(pending)
                else:
                    self.keep(_source(pending))
                pending = []
                run.append(element)
            elif element is not None and not self.rules.ignored(element):
                self.unit(name, run)
                self.keep(_source(pending))
                run, pending = [], []
                self.structure(element)
            else:
                pending.append(child)
        self.unit(name, run)
        self.keep(_source(pending))

    def structure(self, element: _Element) -> None:
        """An element that is not inside a unit: its tags kept, its content laid out."""
        if self.rules.ignored(element) or not element.children:
            self.keep(element.source)
            return
        self.keep(element.open)
        self.container(element.name, element.children)
        self.keep(element.close)

    def unit(self, name: str, run: Sequence[_Node]) -> None:
        """`run` as one unit, or kept as it is when it has nothing to translate."""
        if not run:
            return
        unit: UnitText[_Markup] = UnitText(Syntax(0))
        for node in run:
            self.inline(unit, node)
        if not unit.translatable:
            self.keep(_source(run))
            return
        text = unit.text
        core = text.strip()
        lead = text[: len(text) - len(text.lstrip())]
        trail = text[len(lead) + len(core):]
        source = _source(run)  # "" below: the edges hold character references, so render it
        source = source[len(lead):len(source) - len(trail)] if source.startswith(lead) and source.endswith(
            trail) else ""
        self.pieces.append(_Slot(len(self.units), lead, trail, source))
        self.units.append(Unit(core, split=True, where=f"<{name}>" if name else "text"))
        self.markups.append(unit.markup)

    def inline(self, unit: UnitText[_Markup], node: _Node) -> None:
        if isinstance(node, _Text):
            unit.add_text(node.text)
        elif isinstance(node, _Opaque) or self.rules.ignored(node) or not node.children:
            unit.void(_Markup(node.source))
        else:
            unit.open(_Markup(node.open, node.close))
            for child in node.children:
                self.inline(unit, child)
            unit.close()


class XmlDocument(ParsedDocument):
    def __init__(self, prolog: str, layout: _Layout) -> None:
        self._prolog = prolog
        self._pieces = layout.pieces
        self._units = tuple(layout.units)
        self._markups = layout.markups

    @property
    def units(self) -> tuple[Unit, ...]:
        return self._units

    def render(self, translations: Sequence[Tree]) -> bytes:
        out = [self._prolog]
        for piece in self._pieces:
            if isinstance(piece, str):
                out.append(piece)
            else:
                tree = translations[piece.index]
                kept = tree == parse_tree(self._units[piece.index].text) and piece.source
                body = piece.source if kept else _render_unit(tree, self._markups[piece.index])
                out.append(piece.lead + body + piece.trail)
        return "".join(out).encode("utf-8")


def _render_unit(tree: Tree, markup: dict[int, _Markup | Literal]) -> str:
    """A unit's translation: text escaped, each tag's own source back (a tag standing for
    characters of the text, a URL, is escaped as text)."""
    def opening(number: int) -> str:
        tag = markup[number]
        return tag.open if isinstance(tag, _Markup) else _escape(tag.open)

    def closing(number: int) -> str:
        tag = markup[number]
        return tag.close if isinstance(tag, _Markup) else _escape(tag.close)

    return render(tree, text=_escape, open=opening, close=closing, void=opening)


def parse_with_rules(data: bytes, rules: TagRules) -> XmlDocument:
    """`data` (UTF-8 XML, a document or a fragment) as units under `rules`."""
    prolog, nodes = _read(data)
    layout = _Layout(rules)
    layout.container("", nodes)
    return XmlDocument(prolog, layout)


def parse(data: bytes) -> XmlDocument:
    return parse_with_rules(data, TagRules())


FORMAT = DocumentFormat(NAME, (".xml",), "application/xml", parse, text=True, parse_with_rules=parse_with_rules)
