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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from hymt.documents.inline_tags import tagged_text
from hymt.documents.units import Node, ParsedDocument, TagNode, Tree, Unit
from hymt.errors import InvalidDocumentError, InvalidInputError

_BOM = "\ufeff"


@dataclass(frozen=True)
class Slot:
    """Where the translation of unit `unit` (its id in the document) goes."""

    unit: int


#: Source text with slots, in order.
Template = tuple[str | Slot, ...]

#: Escapes a translated text node for where it goes: (text, at_start, at_end) -> source,
#: where at_start/at_end say that the node begins/ends the unit.
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

    def __init__(
        self, body: Template, units: Sequence[tuple[int, Unit, UnitLayout]], *, bom: bool
    ) -> None:
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
            tree = self.trees[unit_id]
            text, changed = self.nodes(tree, 0, layout, top=True)
            if changed and layout.quote:
                text = layout.quote + text + layout.quote
            self.done[unit_id] = text
        return self.done[unit_id]

    def nodes(self, nodes: Sequence[Node], parent: int, layout: UnitLayout, *, top: bool) -> tuple[str, bool]:
        parts: list[str] = []
        changed = False
        for index, node in enumerate(nodes):
            if isinstance(node, str):
                original = layout.originals.get((parent, index))
                if original is not None and original[0] == node:
                    parts.append(original[1])
                    continue
                changed = True
                parts.append(layout.escape(node, top and index == 0, top and index == len(nodes) - 1))
                continue
            text, inner_changed = self.tag(node, layout)
            changed = changed or inner_changed
            parts.append(text)
        return "".join(parts), changed

    def tag(self, node: TagNode, layout: UnitLayout) -> tuple[str, bool]:
        markup = layout.tags.get(node.number)
        if markup is None:
            raise InvalidInputError(f"<s{node.number}> is not a tag of this unit", field="translations")
        if node.void:
            return self.fill(markup.open), False
        inner, changed = self.nodes(node.children, node.number, layout, top=False)
        close = markup.close
        if markup.close_if_changed is not None and tagged_text(node.children) != layout.tag_sources.get(node.number):
            close = markup.close_if_changed
        before = after = ""
        if changed and layout.spaces_outside_tags:
            stripped = inner.strip()
            before, after = inner[: len(inner) - len(inner.lstrip())], inner[len(inner.rstrip()) :]
            inner = stripped
        return before + self.fill(markup.open) + inner + self.fill(close) + after, changed


class LineIndex:
    """Line numbers (from 1) of offsets in a text."""

    def __init__(self, text: str) -> None:
        self._starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]

    def line(self, offset: int) -> int:
        return bisect.bisect_right(self._starts, offset)
