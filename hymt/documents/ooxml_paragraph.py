"""An Office paragraph (WordprocessingML `w:p`, DrawingML `a:p`) as one unit whose run
formatting travels as numbered tags, and the translated paragraph written back.

A dialect (docx_paragraph.py, pptx_format.py) turns the paragraph's children into items:
- `TextRun`: text with its run properties (adjacent runs of the same formatting merged);
- `Opaque`: elements written back unchanged and unread: a tab, a break, an image, a field's
  code, a bookmark; a void tag where it sits between text;
- `Group`: elements around runs, written back around the translated runs: a hyperlink, a
  content control, a complex field (its code before, its end after, its result inside).

The formatting that covers most characters is the paragraph's own: its text is plain. Text in
any other formatting becomes `<sN>…</sN>` carrying that run's properties, so render puts the
translated words back in runs of the original formatting. Opaque items before the first text
and after the last stay where they are, outside the unit; the paragraph's properties stay
first. Placeholders in the text become void tags (placeholders.py) written back as text.
"""
from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from lxml import etree
from lxml.etree import _Element as Element

from hymt.documents.placeholders import PROSE
from hymt.documents.unit_text import Literal, UnitText
from hymt.documents.units import Tree, Unit


@dataclass
class TextRun:
    """Text in one formatting. `original`: the runs it was read from, written back when it is
    kept whole; empty for text cut from a run that held more than text."""

    text: str
    props: Element | None
    key: str
    original: list[Element]


@dataclass
class Opaque:
    """Elements written back unchanged. `key`: the formatting of the run they came from (None
    outside runs). `cut`: they were cut from a run that held text too, and are written inside
    a new run with a copy of `props`."""

    elements: list[Element]
    key: str | None = None
    props: Element | None = None
    cut: bool = False


@dataclass
class Group:
    """Runs inside `shell` (its `content` element), or between the `open` and `close` items."""

    items: list[Item]
    open: list[Item] = field(default_factory=list)
    shell: Element | None = None
    content: Element | None = None
    close: list[Item] = field(default_factory=list)


Item = TextRun | Opaque | Group


def has_text(items: Sequence[Item]) -> bool:
    return any(isinstance(i, TextRun) and i.text or isinstance(i, Group) and has_text(i.items) for i in items)


@dataclass(frozen=True)
class Format:
    """Tag markup: runs of these properties."""

    props: Element | None


@dataclass(frozen=True)
class GroupTag:
    """Tag markup: a group around runs, whose own text has `props`."""

    group: Group
    props: Element | None


Markup = Format | GroupTag | Opaque | Group | Literal


class Dialect(ABC):
    """What differs between WordprocessingML and DrawingML paragraphs."""

    @abstractmethod
    def head(self, paragraph: Element) -> list[Element]:
        """The children that stay first, untouched (the paragraph's properties)."""

    @abstractmethod
    def items(self, paragraph: Element) -> list[Item]:
        """The other children as items, in order."""

    @abstractmethod
    def make_runs(self, parent: Element, text: str, props: Element | None) -> list[Element]:
        """New runs holding `text` with a copy of `props`."""

    def cut_run(self, parent: Element, elements: list[Element], props: Element | None) -> Element:
        """A new run with a copy of `props` holding `elements` (cut from a run)."""
        raise NotImplementedError(f"{type(self).__name__} never cuts runs")

    def elements(self, parent: Element, item: Item) -> list[Element]:
        """The elements that write `item` back as it was read."""
        if isinstance(item, Opaque):
            return [self.cut_run(parent, item.elements, item.props)] if item.cut else item.elements
        if isinstance(item, TextRun):
            return item.original or self.make_runs(parent, item.text, item.props)
        around = [*self.elements_of(parent, item.open)]
        if item.shell is not None:
            return [*around, item.shell, *self.elements_of(parent, item.close)]
        return [*around, *self.elements_of(parent, item.items), *self.elements_of(parent, item.close)]

    def elements_of(self, parent: Element, items: Sequence[Item]) -> list[Element]:
        return [e for item in items for e in self.elements(parent, item)]


@dataclass
class ParagraphUnit:
    """A paragraph's unit: its text and what render needs."""

    paragraph: Element
    text: str
    markup: dict[int, Markup]
    prefix: list[Item]
    suffix: list[Item]
    props: Element | None


def read_paragraph(paragraph: Element, dialect: Dialect) -> ParagraphUnit | None:
    """The paragraph's unit; None when it has no text to translate."""
    items = normalized(dialect.items(paragraph))
    with_text = [i for i, item in enumerate(items) if has_text([item])]
    if not with_text:
        return None
    first, last = with_text[0], with_text[-1]
    body = items[first : last + 1]
    unit: UnitText[Format | GroupTag | Opaque | Group] = UnitText(PROSE)
    props = _emit(unit, body)
    if not unit.translatable:
        return None
    return ParagraphUnit(paragraph, unit.text, unit.markup, items[:first], items[last + 1 :], props)


def normalized(items: list[Item]) -> list[Item]:
    """Adjacent runs of the same formatting merged, runs of empty text made opaque, groups
    normalized inside."""
    out: list[Item] = []
    for item in items:
        if isinstance(item, Group):
            item.items = normalized(item.items)
        elif isinstance(item, TextRun) and not item.text and item.original:
            item = Opaque(item.original, item.key)
        previous = out[-1] if out else None
        if isinstance(item, TextRun) and isinstance(previous, TextRun) and previous.key == item.key and \
                bool(previous.original) == bool(item.original):
            out[-1] = TextRun(previous.text + item.text, previous.props, item.key, previous.original + item.original)
        else:
            out.append(item)
    return out


def _dominant(items: Sequence[Item]) -> TextRun | None:
    """The first run of the formatting that covers most characters among `items`."""
    counts: Counter[str] = Counter()
    first: dict[str, TextRun] = {}
    for item in items:
        if isinstance(item, TextRun):
            counts[item.key] += len(item.text)
            first.setdefault(item.key, item)
    return first[counts.most_common(1)[0][0]] if counts else None


def _emit(unit: UnitText[Format | GroupTag | Opaque | Group], items: Sequence[Item]) -> Element | None:
    """Adds `items` to the unit; returns the properties of its plain text."""
    dominant = _dominant(items)
    key = dominant.key if dominant else None
    index = 0
    while index < len(items):
        item = items[index]
        if isinstance(item, TextRun) and item.key == key:
            unit.add_text(item.text)
        elif isinstance(item, TextRun):
            end = _span_end(items, index, item.key)
            unit.open(Format(item.props))
            for inner in items[index:end]:
                _add_inline(unit, inner)
            unit.close()
            index = end
            continue
        elif isinstance(item, Group) and has_text(item.items):
            own = _dominant(item.items)
            unit.open(GroupTag(item, own.props if own else None))
            _emit(unit, item.items)
            unit.close()
        else:  # consecutive elements without text are one void tag
            end = index + 1
            while end < len(items) and _is_void(items[end]):
                end += 1
            unit.void(item if end == index + 1 else Group([], open=list(items[index:end])))
            index = end
            continue
        index += 1
    return dominant.props if dominant else None


def _is_void(item: Item) -> bool:
    """Whether `item` has no text (it joins the void tag of its neighbours without text)."""
    return isinstance(item, Opaque) or isinstance(item, Group) and not has_text(item.items)


def _span_end(items: Sequence[Item], start: int, key: str) -> int:
    """The end of the stretch from `start` whose runs all have formatting `key` (opaque items
    of that run formatting inside it included; at its end not)."""
    end = start + 1
    last_text = start
    while end < len(items):
        item = items[end]
        if isinstance(item, TextRun) and item.key == key:
            last_text = end
        elif not (isinstance(item, Opaque) and item.key == key):
            break
        end += 1
    return last_text + 1


def _add_inline(unit: UnitText[Format | GroupTag | Opaque | Group], item: Item) -> None:
    if isinstance(item, TextRun):
        unit.add_text(item.text)
    else:
        unit.void(item)


def write_paragraph(unit: ParagraphUnit, tree: Tree, dialect: Dialect) -> None:
    """Replaces the paragraph's content by the translated tree; the head, prefix and suffix
    elements stay."""
    paragraph = unit.paragraph
    head = dialect.head(paragraph)
    body = _render(paragraph, tree, unit.markup, unit.props, dialect)
    for child in list(paragraph):
        paragraph.remove(child)
    prefix = dialect.elements_of(paragraph, unit.prefix)
    suffix = dialect.elements_of(paragraph, unit.suffix)
    for element in [*head, *prefix, *body, *suffix]:
        paragraph.append(element)


def _render(parent: Element, tree: Tree, markup: dict[int, Markup], props: Element | None,
            dialect: Dialect) -> list[Element]:
    out: list[Element] = []
    for node in tree:
        if isinstance(node, str):
            out += dialect.make_runs(parent, node, props)
            continue
        tag = markup[node.number]
        if isinstance(tag, Opaque | Group):
            out += dialect.elements(parent, tag)
        elif isinstance(tag, Literal):
            out += dialect.make_runs(parent, tag.open, props)
            out += _render(parent, node.children, markup, props, dialect)
            out += dialect.make_runs(parent, tag.close, props) if tag.close else []
        elif isinstance(tag, Format):
            out += _render(parent, node.children, markup, tag.props, dialect)
        else:
            inner = _render(parent, node.children, markup, tag.props, dialect)
            out += _render_group(parent, tag.group, inner, dialect)
    return out


def _render_group(parent: Element, group: Group, inner: list[Element], dialect: Dialect) -> list[Element]:
    opening = dialect.elements_of(parent, group.open)
    closing = dialect.elements_of(parent, group.close)
    if group.shell is None:
        return [*opening, *inner, *closing]
    content = group.content if group.content is not None else group.shell
    for child in list(content):
        if not (isinstance(child.tag, str) and etree.QName(child).localname.endswith("Pr")):
            content.remove(child)
    for element in inner:
        content.append(element)
    return [*opening, group.shell, *closing]


def props_key(props: Element | None, ignored_attributes: frozenset[str], ignored_children: frozenset[str]) -> str:
    """A canonical string of run properties, without what does not make text look different
    (spell-check state, the language tag): runs whose keys are equal merge."""
    if props is None:
        return ""
    props = copy.deepcopy(props)
    for element in props.iter():
        for name in list(element.attrib):
            if etree.QName(name).localname in ignored_attributes:
                del element.attrib[name]
    for child in list(props):
        if isinstance(child.tag, str) and child.tag in ignored_children:
            props.remove(child)
    return etree.tostring(props, method="c14n").decode()


@dataclass(frozen=True)
class Story:
    """Paragraphs of one part of a document (the body, a header, a slide), labelled for
    `Unit.where`."""

    label: str
    paragraphs: Sequence[Element]


@dataclass(frozen=True)
class PlacedParagraph:
    """A paragraph to rewrite with translation `unit_index`."""

    paragraph: ParagraphUnit
    unit_index: int


_MC_FALLBACK = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"
_MC_CHOICE = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Choice"


def read_stories(stories: Sequence[Story], dialect: Dialect) -> tuple[tuple[Unit, ...], list[PlacedParagraph]]:
    """The units of every paragraph with text, and where each translation goes.

    Office writes a text box twice: for current readers (`mc:Choice`) and older ones
    (`mc:Fallback`). A fallback paragraph whose unit equals its twin in the choice is written
    with the twin's translation instead of being a unit of its own."""
    units: list[Unit] = []
    placed: list[PlacedParagraph] = []
    unit_of: dict[Element, int] = {}
    for story in stories:
        count = 0
        for paragraph in story.paragraphs:
            read = read_paragraph(paragraph, dialect)
            if read is None:
                continue
            twin = _choice_twin(paragraph)
            if twin is not None and twin in unit_of and units[unit_of[twin]].text == read.text:
                placed.append(PlacedParagraph(read, unit_of[twin]))
                continue
            count += 1
            unit_of[paragraph] = len(units)
            placed.append(PlacedParagraph(read, len(units)))
            units.append(Unit(read.text, where=f"{story.label} ¶{count}"))
    return tuple(units), placed


def _choice_twin(paragraph: Element) -> Element | None:
    """The paragraph at the same place in the `mc:Choice` of the fallback holding `paragraph`."""
    for ancestor in paragraph.iterancestors(_MC_FALLBACK):
        choice = ancestor.getparent().find(_MC_CHOICE) if ancestor.getparent() is not None else None
        if choice is None:
            return None
        index = list(ancestor.iter(paragraph.tag)).index(paragraph)
        twins = list(choice.iter(paragraph.tag))
        return twins[index] if index < len(twins) else None
    return None


def write_stories(placed: Sequence[PlacedParagraph], translations: Sequence[Tree], dialect: Dialect) -> None:
    for entry in placed:
        write_paragraph(entry.paragraph, translations[entry.unit_index], dialect)
