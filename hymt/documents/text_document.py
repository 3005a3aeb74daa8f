"""A text document (plain text, Markdown, HTML) as its source with slots where units go.

A text format reads its file into a `Template`: the source, piece by piece, with a `Slot`
wherever a unit's translation goes. A unit's inline markup is kept as `TagMarkup`, the exact
source of each tag, which may itself hold slots (an image's alt text inside a sentence is a
unit of its own). Rendering fills every slot; everything else is the source, byte for byte.

A text node of a translation that equals the source's text node at the same place (same
parent tag, same position) is written with the source's own bytes: a unit translated as
itself gives back its exact source (entities as they were spelled, wrapped lines as they were
wrapped), and any other text is escaped for where it goes.
"""
from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from hymt.documents.inline_tags import tagged_text
from hymt.documents.units import Node, ParsedDocument, TagNode, Tree, Unit
from hymt.errors import InvalidDocumentError, InvalidInputError

_BOM = "\ufeff"
_LINE_END = re.compile(r"[\r\n][ \t>]*\Z")


@dataclass(frozen=True)
class Slot:
    """Where the translation of unit `unit` (its id in the document) goes."""

    unit: int


#: Source text with slots, in order.
Template = tuple[str | Slot, ...]

#: Escapes a translated text node for where it goes: (text, at_line_start, at_end) ->
#: source, where at_line_start says the node begins the unit or a line inside it, and at_end
#: that it ends the unit.
Escape = Callable[[str, bool, bool], str]


@dataclass(frozen=True)
class TagMarkup:
    """The source of one numbered tag: `open` (all of a void tag) and `close`.
    `close_if_changed` replaces `close` when the tag's content is translated (a Markdown
    shortcut reference link `[text]` whose text is its label needs `][label]` then)."""

    open: Template
    close: Template = ()
    close_if_changed: Template | None = None


@dataclass(frozen=True)
class UnitLayout:
    """How one unit's translation is written.

    Attributes:
        tags: each tag number's markup.
        originals: the source's text nodes, {(parent tag number or 0, child index): (text,
            source)}.
        escape: escapes translated text.
        tag_sources: the source content of each tag with `close_if_changed`, in tag syntax.
        quote: put around a translated unit (an unquoted HTML attribute value).
        spaces_outside_tags: whitespace at either end of a translated tag's content goes
            outside its markup (Markdown emphasis must hug its text: `**bold **` is not
            bold).
    """

    tags: Mapping[int, TagMarkup]
    originals: Mapping[tuple[int, int], tuple[str, str]]
    escape: Escape
    tag_sources: Mapping[int, str] = field(default_factory=dict)
    quote: str = ""
    spaces_outside_tags: bool = False


def decode_text(data: bytes, format_name: str) -> tuple[str, bool]:
    """A text file's content without its byte-order mark, and whether it had one."""
    if not isinstance(data, bytes | bytearray):
        raise InvalidInputError(f"a {format_name} document must be bytes, got {type(data).__name__}", field="data")
    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError as err:
        raise InvalidDocumentError(
            f"{format_name} document is not valid UTF-8: byte {err.start} ({data[err.start:err.start + 1]!r})",
            field="file",
        ) from None
    if text.startswith(_BOM):
        return text[1:], True
    return text, False


class TextDocument(ParsedDocument):
    """A parsed text document: units in document order, and the template they fill."""

    def __init__(self, body: Template, units: Sequence[tuple[int, Unit, UnitLayout]]) -> None:
        self._body = body
        self._ids = tuple(unit_id for unit_id, _, _ in units)
        self._units = tuple(unit for _, unit, _ in units)
        self._layouts = {unit_id: layout for unit_id, _, layout in units}

    @property
    def units(self) -> tuple[Unit, ...]:
        return self._units

    def render(self, translations: Sequence[Tree]) -> bytes:
        if len(translations) != len(self._units):
            raise InvalidInputError(
                f"expected {len(self._units)} translations (one per unit), got {len(translations)}",
                field="translations",
            )
        trees = dict(zip(self._ids, translations))
        return _Renderer(trees, self._layouts).fill(self._body).encode("utf-8")


@dataclass
class _Renderer:
    trees: Mapping[int, Tree]
    layouts: Mapping[int, UnitLayout]
    done: dict[int, str] = field(default_factory=dict)

    def fill(self, template: Template) -> str:
        return "".join(part if isinstance(part, str) else self.unit(part.unit) for part in template)

    def unit(self, unit_id: int) -> str:
        if unit_id not in self.done:
            layout = self.layouts[unit_id]
            rendered = self.nodes(self.trees[unit_id], 0, layout, line_start=True, top=True)
            text = rendered.text
            if rendered.changed and layout.quote:
                text = layout.quote + text + layout.quote
            self.done[unit_id] = text
        return self.done[unit_id]

    def nodes(
        self, nodes: Sequence[Node], parent: int, layout: UnitLayout, *, line_start: bool, top: bool
    ) -> _Rendered:
        """The nodes as source. `line_start`: they begin a line (the unit's start, or after a
        line break inside it), where an escape may have more to escape."""
        parts: list[_Rendered] = []
        for index, node in enumerate(nodes):
            if isinstance(node, TagNode):
                part = self.tag(node, layout, line_start)
            elif _original(layout, parent, index, node):
                part = _Rendered(layout.originals[(parent, index)][1])
            else:
                escaped = layout.escape(node, line_start, top and index == len(nodes) - 1)
                stripped = escaped.strip()
                loose_before = escaped[: len(escaped) - len(escaped.lstrip())]
                part = _Rendered(escaped, True, loose_before, escaped[len(loose_before) + len(stripped) :])
            parts.append(part)
            line_start = _ends_line(part.text, line_start)
        return _Rendered(
            "".join(part.text for part in parts),
            any(part.changed for part in parts),
            parts[0].loose_before if parts else "",
            parts[-1].loose_after if parts else "",
        )

    def tag(self, node: TagNode, layout: UnitLayout, line_start: bool) -> _Rendered:
        markup = layout.tags.get(node.number)
        if markup is None:
            raise InvalidInputError(f"<s{node.number}> is not a tag of this unit", field="translations")
        opening = self.fill(markup.open)
        if node.void:
            return _Rendered(opening)
        inner = self.nodes(node.children, node.number, layout, line_start=_ends_line(opening, line_start), top=False)
        close = markup.close
        if markup.close_if_changed is not None and tagged_text(node.children) != layout.tag_sources.get(node.number):
            close = markup.close_if_changed
        if not layout.spaces_outside_tags:
            return _Rendered(opening + inner.text + self.fill(close), inner.changed)
        before, after = inner.loose_before, inner.loose_after
        body = inner.text[len(before) : len(inner.text) - len(after)]
        return _Rendered(before + opening + body + self.fill(close) + after, inner.changed, before, after)


@dataclass(frozen=True)
class _Rendered:
    """Rendered source; `changed`: it holds translated text; `loose_before`/`loose_after`:
    whitespace at its ends that comes from translated text and may move out of a tag."""

    text: str
    changed: bool = False
    loose_before: str = ""
    loose_after: str = ""


def _original(layout: UnitLayout, parent: int, index: int, text: str) -> bool:
    original = layout.originals.get((parent, index))
    return original is not None and original[0] == text


def _ends_line(part: str, line_start: bool) -> bool:
    """Whether what follows `part` begins a line: `part` ends in a line break and its next
    line's indentation or quote markers, or is empty at a line start."""
    return _LINE_END.search(part) is not None if part else line_start


class LineIndex:
    """Line numbers (from 1) of offsets in a text."""

    def __init__(self, text: str) -> None:
        self._starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]

    def line(self, offset: int) -> int:
        return bisect.bisect_right(self._starts, offset)
