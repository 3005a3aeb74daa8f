"""WordprocessingML paragraphs (`w:p`) as items for ooxml_paragraph.py.

- A run (`w:r`) of text only is one text item; a run of anything else (a tab, a break, an
  image, a footnote reference, a field character) is opaque as it is; a run that mixes both
  is cut into pieces, each a new run with a copy of the run's properties. Word's layout hint
  `w:lastRenderedPageBreak` and the spell checker's `w:proofErr` are dropped from the runs
  and paragraphs that are rewritten: Word recomputes both.
- Hyperlinks, inline content controls, smart tags, custom XML, tracked insertions and
  direction overrides are groups around their runs.
- A complex field (`w:fldChar` begin … separate … end) whose parts are all in the paragraph
  is a group: its code (begin to separate) before, its end after, its displayed result inside,
  translated. A field without a result, a simple field (`w:fldSimple`) and a field cut by the
  paragraph's end are opaque.
- Everything else (bookmarks, comment ranges, deleted text, math) is opaque.
"""
from __future__ import annotations

import copy

from docx.oxml.ns import qn

from hymt.documents.ooxml_paragraph import Dialect, Element, Group, Item, Opaque, TextRun, props_key

_GROUP_TAGS = frozenset(qn(f"w:{name}") for name in ("hyperlink", "smartTag", "customXml", "ins", "moveTo", "dir",
                                                      "bdo"))
_DROPPED = frozenset((qn("w:proofErr"), qn("w:lastRenderedPageBreak")))
_IGNORED_ATTRIBUTES: frozenset[str] = frozenset()
_IGNORED_PROPS = frozenset((qn("w:lang"), qn("w:noProof")))
_XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"


class WordDialect(Dialect):
    def head(self, paragraph: Element) -> list[Element]:
        return [child for child in paragraph if child.tag == qn("w:pPr")]

    def items(self, paragraph: Element) -> list[Item]:
        return _fields(self._children(paragraph, skip=qn("w:pPr")))

    def _children(self, parent: Element, skip: str = "") -> list[Item]:
        items: list[Item] = []
        for child in parent:
            tag = child.tag
            if tag == skip or tag in _DROPPED:
                continue
            if tag == qn("w:r"):
                items += _run_items(child)
            elif tag in _GROUP_TAGS:
                items.append(Group(_fields(self._children(child)), shell=child, content=child))
            elif tag == qn("w:sdt") and child.find(qn("w:sdtContent")) is not None:
                content = child.find(qn("w:sdtContent"))
                items.append(Group(_fields(self._children(content)), shell=child, content=content))
            else:
                items.append(Opaque([child]))
        return items

    def cut_run(self, parent: Element, elements: list[Element], props: Element | None) -> Element:
        run = parent.makeelement(qn("w:r"), nsmap=None)
        if props is not None:
            run.append(copy.deepcopy(props))
        for element in elements:
            run.append(element)
        return run

    def make_runs(self, parent: Element, text: str, props: Element | None) -> list[Element]:
        run = parent.makeelement(qn("w:r"), nsmap=None)
        if props is not None:
            run.append(copy.deepcopy(props))
        pending = ""
        for char in text:
            if char in "\t\n":
                _add_text(run, pending)
                pending = ""
                run.append(run.makeelement(qn("w:tab" if char == "\t" else "w:br"), nsmap=None))
            else:
                pending += char
        _add_text(run, pending)
        return [run]


def _add_text(run: Element, text: str) -> None:
    if text:
        t = run.makeelement(qn("w:t"), nsmap=None)
        t.text = text
        t.set(_XML_SPACE, "preserve")
        run.append(t)


def _key(props: Element | None) -> str:
    return props_key(props, _IGNORED_ATTRIBUTES, _IGNORED_PROPS)


def _run_items(run: Element) -> list[Item]:
    props = run.find(qn("w:rPr"))
    key = _key(props)
    children = [c for c in run if c is not props and c.tag not in _DROPPED]
    is_text = [c.tag == qn("w:t") for c in children]
    if all(is_text):
        return [TextRun("".join(c.text or "" for c in children), props, key, [run])]
    if not any(is_text) and not (len(children) > 1 and any(c.tag == qn("w:fldChar") for c in children)):
        return [Opaque([run], key)]
    # Mixed: each text and each other child is written in a new run of the same formatting.
    return [TextRun(c.text or "", props, key, []) if text else Opaque([c], key, props, cut=True)
            for c, text in zip(children, is_text)]


def _field_char(item: Item) -> str:
    """"begin", "separate" or "end" for an opaque run holding a field character; else ""."""
    if not isinstance(item, Opaque) or len(item.elements) != 1:
        return ""
    element = item.elements[0]
    char = element if element.tag == qn("w:fldChar") else element.find(qn("w:fldChar"))
    return char.get(qn("w:fldCharType"), "") if char is not None else ""


def _fields(items: list[Item]) -> list[Item]:
    """Complex fields among `items` as groups (result inside) or opaque items."""
    out: list[Item] = []
    index = 0
    while index < len(items):
        if _field_char(items[index]) != "begin":
            out.append(items[index])
            index += 1
            continue
        separate, end = _field_bounds(items, index)
        if separate is not None and end is not None:
            out.append(Group(_fields(items[separate + 1 : end]), open=items[index : separate + 1],
                             close=[items[end]]))
            index = end + 1
        else:
            stop = end if end is not None else separate if separate is not None else len(items) - 1
            out.append(Group([], open=items[index : stop + 1]))
            index = stop + 1
    return out


def _field_bounds(items: list[Item], begin: int) -> tuple[int | None, int | None]:
    """The indexes of the separate and end characters of the field that begins at `begin`."""
    depth = 0
    separate = None
    for index in range(begin, len(items)):
        kind = _field_char(items[index])
        if kind == "begin":
            depth += 1
        elif kind == "separate" and depth == 1:
            separate = index
        elif kind == "end":
            depth -= 1
            if depth == 0:
                return separate, index
    return separate, None
