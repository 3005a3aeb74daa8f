"""The inline content of an XLIFF source as a unit, and a translated tree as target content.

Codes that wrap text become paired tags: `<g>` (1.2), `<pc>` (2.x) and `<mrk>` (both). Every
other inline element becomes a void tag and is copied whole, its content included: `<x/>`,
`<bx/>`, `<ex/>`, `<ph>`, `<bpt>`, `<ept>`, `<it>` (1.2, whose content is native code, not
text), `<ph/>`, `<sc/>`, `<ec/>`, `<sm/>`, `<em/>`, `<cp/>` (2.x), and a `<mrk>` marked
`translate="no"` or `mtype="protected"` (its text must stay). The text between codes may
hold placeholders, which become tags too (placeholders.py).
"""
from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass

from lxml import etree
from lxml.etree import _Element as Element

from hymt.documents.placeholders import I18N
from hymt.documents.unit_text import Literal, UnitText
from hymt.documents.units import Tree

_PAIRED = frozenset(("g", "pc", "mrk"))


@dataclass(frozen=True)
class Code:
    """Tag markup: an inline element. Paired: its copy without content, the translation goes
    inside. Void: its copy whole."""

    element: Element
    paired: bool


@dataclass(frozen=True)
class InlineUnit:
    text: str
    markup: Mapping[int, Code | Literal]
    translatable: bool


def _local(element: Element) -> str:
    return etree.QName(element).localname if isinstance(element.tag, str) else ""


def _protected(element: Element) -> bool:
    return element.get("translate") == "no" or element.get("mtype") == "protected"


def read_inline(element: Element) -> InlineUnit:
    """The content of `element` (a source, or a segment marker in it) as a unit."""
    unit: UnitText[Code] = UnitText(I18N)
    _read(unit, element)
    return InlineUnit(unit.text, unit.markup, unit.translatable)


def _read(unit: UnitText[Code], element: Element) -> None:
    unit.add_text(element.text or "")
    for child in element:
        if not isinstance(child.tag, str):  # a comment or processing instruction inside text
            unit.void(Code(_detached(child), paired=False))
        elif _local(child) in _PAIRED and not _protected(child):
            shell = _detached(child)
            shell.text = None
            for inner in list(shell):
                shell.remove(inner)
            unit.open(Code(shell, paired=True))
            _read(unit, child)
            unit.close()
        else:
            unit.void(Code(_detached(child), paired=False))
        unit.add_text(child.tail or "")


def _detached(element: Element) -> Element:
    out = copy.deepcopy(element)
    out.tail = None
    return out


def write_inline(element: Element, tree: Tree, markup: Mapping[int, Code | Literal]) -> None:
    """Replaces the content of `element` by the translated tree (its attributes stay)."""
    element.text = None
    for child in list(element):
        element.remove(child)
    _write(element, tree, markup)


def _append_text(parent: Element, text: str) -> None:
    if not text:
        return
    if len(parent):
        last = parent[-1]
        last.tail = (last.tail or "") + text
    else:
        parent.text = (parent.text or "") + text


def _write(parent: Element, tree: Tree, markup: Mapping[int, Code | Literal]) -> None:
    for node in tree:
        if isinstance(node, str):
            _append_text(parent, node)
            continue
        tag = markup[node.number]
        if isinstance(tag, Literal):
            children = node.children
            if tag.syntax_only:  # an ICU argument: text outside its branches goes before it
                stray = "".join(child for child in children if isinstance(child, str)).strip()
                _append_text(parent, stray + " " if stray else "")
                children = tuple(child for child in children if not isinstance(child, str))
            _append_text(parent, tag.open)
            _write(parent, children, markup)
            _append_text(parent, tag.close)
            continue
        element = copy.deepcopy(tag.element)
        parent.append(element)
        if tag.paired:
            _write(element, node.children, markup)
