"""Building a unit's text with numbered tags, and writing a translated tree back as a string.

A format walks its inline content and calls `UnitText`: `add_text` for characters (where
placeholders become tags, placeholders.py), `open`/`close` around formatted content, `void`
for an element without content. Each tag number maps to the format's own markup (a run's
properties, an XLIFF code element) or to a `Literal` (a placeholder's characters).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

from hymt.documents.inline_tags import close_tag, open_tag, void_tag
from hymt.documents.placeholders import Piece, Placeholder, Syntax, Wrapper, has_letters, is_address, scan
from hymt.documents.units import Tree

M = TypeVar("M")


@dataclass(frozen=True)
class Literal:
    """A tag that stands for characters of the source, written back unchanged: `open` alone
    for a void tag; `syntax_only` for an ICU argument (text the model puts directly inside it,
    outside its branches, is written before it)."""

    open: str
    close: str = ""
    syntax_only: bool = False


class UnitText(Generic[M]):
    """A unit's text under construction and the markup behind each tag number."""

    def __init__(self, syntaxes: Syntax) -> None:
        self._syntaxes = syntaxes
        self._parts: list[str] = []
        self._markup: dict[int, M | Literal] = {}
        self._open: list[int] = []
        self._letters = False

    @property
    def text(self) -> str:
        return "".join(self._parts)

    @property
    def markup(self) -> dict[int, M | Literal]:
        return dict(self._markup)

    @property
    def translatable(self) -> bool:
        """Whether the text outside placeholders has a letter."""
        return self._letters

    def add_text(self, text: str) -> None:
        for piece in scan(text, self._syntaxes):
            self._add_piece(piece)

    def _add_piece(self, piece: Piece) -> None:
        if isinstance(piece, str):
            self._parts.append(piece)
            self._letters = self._letters or has_letters(piece)
        elif isinstance(piece, Placeholder):
            self.void(Literal(piece.literal))
        else:
            self._wrap(piece)

    def _wrap(self, wrapper: Wrapper) -> None:
        self.open(Literal(wrapper.open, wrapper.close, wrapper.syntax_only))
        for child in wrapper.children:
            self._add_piece(child)
        self.close()

    def _number(self, markup: M | Literal) -> int:
        number = len(self._markup) + 1
        self._markup[number] = markup
        return number

    def void(self, markup: M | Literal) -> None:
        self._parts.append(void_tag(self._number(markup)))

    def open(self, markup: M | Literal) -> None:
        number = self._number(markup)
        self._open.append(number)
        self._parts.append(open_tag(number))

    def close(self) -> None:
        self._parts.append(close_tag(self._open.pop()))


def render_string(tree: Tree, markup: Mapping[int, Literal], escape: Callable[[str], str] = str) -> str:
    """A translated tree whose tags are all `Literal`s as a string; `escape` escapes the
    translated text (not the literals) for where it goes."""
    parts: list[str] = []
    for node in tree:
        if isinstance(node, str):
            parts.append(escape(node))
            continue
        literal = markup[node.number]
        if node.void:
            parts.append(literal.open)
            continue
        children = node.children
        if literal.syntax_only:
            stray = "".join(child for child in children if isinstance(child, str)).strip()
            parts.append(escape(stray + " ") if stray else "")
            children = tuple(child for child in children if not isinstance(child, str))
        parts.append(literal.open + render_string(children, markup, escape) + literal.close)
    return "".join(parts)


@dataclass(frozen=True)
class StringUnit:
    """A string value's unit (a PO message, a JSON or YAML value): the whitespace around it
    stays outside the unit (gettext checks that a translation begins and ends with the same
    newlines as its source), its placeholders are `Literal` tags."""

    lead: str
    text: str
    markup: Mapping[int, Literal]
    trail: str

    def render(self, tree: Tree) -> str:
        return self.lead + render_string(tree, self.markup) + self.trail


def read_string(value: str, syntaxes: Syntax) -> StringUnit | None:
    """`value` as a unit; None when it has nothing to translate (no letter outside its
    placeholders, or a URL or e-mail address alone)."""
    core = value.strip()
    if is_address(core):
        return None
    lead = value[: len(value) - len(value.lstrip())]
    trail = value[len(lead) + len(core) :]
    unit: UnitText[Literal] = UnitText(syntaxes)
    unit.add_text(core)
    if not unit.translatable:
        return None
    markup = {number: tag for number, tag in unit.markup.items()}
    return StringUnit(lead, unit.text, markup, trail)
