"""Builds a TextDocument: a format adds the source in order, as literal markup or as units.

A unit is collected as `Piece`s in source order: text (what the model reads and the exact
source it came from), and the open, close and void markup of inline tags. `place` then turns
the pieces into a unit:

- markup that cannot be a pair (a close without its open, an open never closed) is a void tag;
- whitespace, void tags and tags that wrap everything at either end stay outside the unit
  (`<p><a href="/">Home</a></p>` sends `Home`, not `<s1>Home</s1>`);
- text that looks like a numbered tag (`<s1>` written in the document) is a void tag, so the
  model never confuses it with one of ours;
- tags are numbered from 1 in order, and a unit without a word to translate
  (translatable.py) stays literal source.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hymt.documents.inline_tags import TAG_PATTERN, parse_tree, plain_text, tagged_text
from hymt.documents.text_document import Escape, LineIndex, Slot, TagMarkup, Template, TextDocument, UnitLayout
from hymt.documents.translatable import is_translatable
from hymt.documents.units import TagNode, Tree, Unit


@dataclass(frozen=True)
class Text:
    """`text` as the model reads it, from `source` (the exact bytes it replaces)."""

    text: str
    source: str


@dataclass(frozen=True)
class Open:
    markup: Template
    key: int
    close_if_changed: Template | None = None


@dataclass(frozen=True)
class Close:
    markup: Template
    key: int


@dataclass(frozen=True)
class Void:
    markup: Template


Piece = Text | Open | Close | Void


class UnitPieces:
    """Collects one unit's pieces in source order."""

    def __init__(self) -> None:
        self.pieces: list[Piece] = []
        self._keys = 0

    def text(self, text: str, source: str) -> None:
        if source:
            self.pieces.append(Text(text, source))

    def open(self, markup: Template, close_if_changed: Template | None = None) -> int:
        """Opens a paired tag; returns the key its `close` takes."""
        self._keys += 1
        self.pieces.append(Open(markup, self._keys, close_if_changed))
        return self._keys

    def close(self, key: int, markup: Template) -> None:
        self.pieces.append(Close(markup, key))

    def void(self, markup: Template) -> None:
        if markup:
            self.pieces.append(Void(markup))

    def __bool__(self) -> bool:
        return bool(self.pieces)


class DocumentBuilder:
    """The body template of a document and its units, added in source order."""

    def __init__(self, text: str) -> None:
        self._body: list[str | Slot] = []
        self._units: list[tuple[int, int, Unit, UnitLayout]] = []
        self._lines = LineIndex(text)

    def literal(self, template: Template | str) -> None:
        self._body.extend((template,) if isinstance(template, str) else template)

    def place(
        self,
        pieces: Sequence[Piece],
        *,
        offset: int,
        escape: Escape,
        label: str,
        split: bool = True,
        quote: str = "",
        spaces_outside_tags: bool = False,
    ) -> Template:
        """The pieces as a unit; returns what stands in their place: the markup kept outside
        the unit around its slot, or all of it as literal source when nothing is to be
        translated. `offset` is where the unit starts in the text (it orders the units)."""
        lead, core, trail = _trim(_as_pairs(_tag_like_text(pieces)))
        core = _attach_empty_text(_merge_text(core))
        numbers = _numbers(core)
        text = "".join(_tagged(piece, number) for piece, number in zip(core, numbers))
        if not is_translatable(plain_text(text)):
            return lead + _source(core) + trail
        tree = parse_tree(text)
        tags = _tag_markup(core, numbers)
        layout = UnitLayout(
            tags=tags,
            originals=_originals(core, numbers),
            escape=escape,
            tag_sources=_tag_sources(tree, {n for n, m in tags.items() if m.close_if_changed is not None}),
            quote=quote,
            spaces_outside_tags=spaces_outside_tags,
        )
        unit_id = len(self._units)
        line = f"line {self._lines.line(offset)}"
        where = f"{label}, {line}" if label else line
        self._units.append((offset, unit_id, Unit(text=text, split=split, where=where), layout))
        return (*lead, Slot(unit_id), *trail)

    def checkpoint(self) -> int:
        """A mark to `discard_since`."""
        return len(self._units)

    def discard_since(self, checkpoint: int) -> None:
        """Forgets the units placed since `checkpoint` (their slots must not be used)."""
        del self._units[checkpoint:]

    def build(self, *, bom: bool) -> TextDocument:
        ordered = sorted(self._units, key=lambda entry: (entry[0], entry[1]))
        body: Template = (("\ufeff",) if bom else ()) + tuple(self._body)
        return TextDocument(body, [(unit_id, unit, layout) for _, unit_id, unit, layout in ordered])


def _merge_text(pieces: Sequence[Piece]) -> list[Piece]:
    out: list[Piece] = []
    run: list[Text] = []
    for piece in [*pieces, None]:
        if isinstance(piece, Text):
            run.append(piece)
            continue
        if run:
            out.append(Text("".join(p.text for p in run), "".join(p.source for p in run)))
            run = []
        if piece is not None:
            out.append(piece)
    return out


def _tag_like_text(pieces: Sequence[Piece]) -> list[Piece]:
    """Text that looks like one of our tags becomes a void tag of its own source. Texts are
    looked at together with their neighbours (an escape may sit inside `<s1>`), and left as
    they were when nothing looks like a tag."""
    out: list[Piece] = []
    run: list[Text] = []
    for piece in [*pieces, None]:
        if isinstance(piece, Text):
            run.append(piece)
            continue
        out.extend(_untag(run))
        run = []
        if piece is not None:
            out.append(piece)
    return out


def _untag(run: list[Text]) -> list[Piece]:
    """The run with each stretch that reads as a tag turned into a void tag of its source.
    A piece whose source is its text is cut at the stretch's ends; any other piece (an
    escape, an entity) touching the stretch goes into the void tag whole."""
    text = "".join(piece.text for piece in run)
    matches = [(m.start(), m.end()) for m in TAG_PATTERN.finditer(text)]
    if not matches:
        return list(run)
    out: list[Piece] = []
    hidden_before = False
    pos = 0
    for piece in run:
        end = pos + len(piece.text)
        literal = piece.text == piece.source
        cuts = sorted({pos, end, *(b for m in matches for b in m if pos < b < end)}) if literal else [pos, end]
        for start, stop in zip(cuts, cuts[1:] or cuts):
            source = text[start:stop] if literal else piece.source
            hidden = any(m_start < stop and start < m_end for m_start, m_end in matches)
            if hidden and hidden_before and isinstance(out[-1], Void):
                out[-1] = Void((*out[-1].markup, source))
            elif hidden:
                out.append(Void((source,)))
            else:
                out.append(Text(source if literal else piece.text, source))
            hidden_before = hidden
        pos = end
    return out


def _as_pairs(pieces: Sequence[Piece]) -> list[Piece]:
    """Opens and closes that do not nest as pairs become void tags."""
    paired: set[int] = set()
    stack: list[int] = []
    for piece in pieces:
        if isinstance(piece, Open):
            stack.append(piece.key)
        elif isinstance(piece, Close) and stack and stack[-1] == piece.key:
            paired.add(stack.pop())
    return [Void(p.markup) if isinstance(p, Open | Close) and p.key not in paired else p for p in pieces]


def _trim(pieces: list[Piece]) -> tuple[Template, list[Piece], Template]:
    lead: list[str | Slot] = []
    trail: list[str | Slot] = []
    core = list(pieces)
    while core:
        first, last = core[0], core[-1]
        if _outside(first):
            lead.extend(_source([first]))
            core.pop(0)
        elif _outside(last):
            trail[:0] = _source([last])
            core.pop()
        elif (
            isinstance(first, Open)
            and isinstance(last, Close)
            and first.key == last.key
            and first.close_if_changed is None
        ):
            lead.extend(first.markup)
            trail[:0] = last.markup
            core = core[1:-1]
        else:
            break
    return tuple(lead), core, tuple(trail)


def _outside(piece: Piece) -> bool:
    return isinstance(piece, Void) or isinstance(piece, Text) and not piece.text.strip()


def _attach_empty_text(pieces: list[Piece]) -> list[Piece]:
    """Text that reads as nothing (a line break joining CJK lines between two tags) joins the
    markup before it: an empty text node would vanish from the unit's tree."""
    out: list[Piece] = []
    for piece in pieces:
        if isinstance(piece, Text) and not piece.text and out:
            prev = out.pop()
            if isinstance(prev, Open):
                out.append(Open((*prev.markup, piece.source), prev.key, prev.close_if_changed))
            elif isinstance(prev, Close):
                out.append(Close((*prev.markup, piece.source), prev.key))
            elif isinstance(prev, Void):
                out.append(Void((*prev.markup, piece.source)))
            else:
                out.append(Text(prev.text, prev.source + piece.source))
            continue
        out.append(piece)
    return out


def _numbers(pieces: list[Piece]) -> list[int]:
    """Each piece's tag number (0 for text), numbered from 1 in order of appearance; a close
    takes its open's number."""
    numbers: list[int] = []
    by_key: dict[int, int] = {}
    count = 0
    for piece in pieces:
        if isinstance(piece, Open | Void):
            count += 1
            numbers.append(count)
            if isinstance(piece, Open):
                by_key[piece.key] = count
        elif isinstance(piece, Close):
            numbers.append(by_key[piece.key])
        else:
            numbers.append(0)
    return numbers


def _tagged(piece: Piece, number: int) -> str:
    if isinstance(piece, Text):
        return piece.text
    if isinstance(piece, Open):
        return f"<s{number}>"
    if isinstance(piece, Close):
        return f"</s{number}>"
    return f"<s{number}/>"


def _tag_markup(pieces: list[Piece], numbers: list[int]) -> dict[int, TagMarkup]:
    opens: dict[int, Open] = {}
    tags: dict[int, TagMarkup] = {}
    for piece, number in zip(pieces, numbers):
        if isinstance(piece, Open):
            opens[number] = piece
        elif isinstance(piece, Close):
            opened = opens[number]
            tags[number] = TagMarkup(opened.markup, piece.markup, opened.close_if_changed)
        elif isinstance(piece, Void):
            tags[number] = TagMarkup(piece.markup)
    return tags


def _originals(pieces: list[Piece], numbers: list[int]) -> dict[tuple[int, int], tuple[str, str]]:
    """The source of each text node, keyed the way a tree from the unit's text places it:
    (parent tag number or 0, index among the parent's children)."""
    originals: dict[tuple[int, int], tuple[str, str]] = {}
    stack: list[list[int]] = [[0, 0]]  # [tag number, children so far]
    for piece, number in zip(pieces, numbers):
        parent = stack[-1]
        if isinstance(piece, Close):
            stack.pop()
            continue
        if isinstance(piece, Text):
            originals[(parent[0], parent[1])] = (piece.text, piece.source)
        parent[1] += 1
        if isinstance(piece, Open):
            stack.append([number, 0])
    return originals


def _tag_sources(tree: Tree, numbers: set[int]) -> dict[int, str]:
    found: dict[int, str] = {}
    for node in tree:
        if isinstance(node, TagNode):
            if node.number in numbers:
                found[node.number] = tagged_text(node.children)
            found.update(_tag_sources(node.children, numbers))
    return found


def _source(pieces: Sequence[Piece]) -> Template:
    out: list[str | Slot] = []
    for piece in pieces:
        if isinstance(piece, Text):
            out.append(piece.source)
        else:
            out.extend(piece.markup)
    return tuple(out)
