"""XLIFF 1.2 and 2.x (.xlf, .xliff) through lxml, parsed defused (safety.py).

What is sent, and what is written:
- 1.2: each `trans-unit` is one unit (split into sentences by the pipeline), or, when it has
  a `seg-source`, each of its segments (`mrk mtype="seg"`) is one unit; the target is the
  source (or seg-source, segment markers kept) with the translated text, and gets
  `state="translated"` and `state-qualifier="mt-suggestion"`.
- 2.x: each `segment` is one unit, never split; its target gets `state="translated"`.
  `ignorable` parts, `originalData` and `notes` stay as they are.
- Not sent and untouched: units with `translate="no"` (on themselves or inherited from a
  group or file), 1.2 units with `approved="yes"`, and targets that already have content,
  unless their state asks for translation (1.2 `new`, `needs-translation`; 2.x an explicit
  `initial`).
- Notes, alt-trans, contexts, comments and every attribute stay. Inline codes are tags kept
  exactly (xliff_inline.py).
- The target language (1.2 `target-language`, 2.x `trgLang`) is written by `render_for`;
  `render` leaves it as the file says.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lxml import etree

from hymt.documents.safety import parse_xml
from hymt.documents.units import DocumentFormat, LabelledDocument, Tree, Unit
from hymt.documents.xliff_inline import Element, InlineUnit, read_inline, write_inline
from hymt.errors import InvalidDocumentError

NAME = "xliff"
MEDIA_TYPE = "application/xliff+xml"
_V1 = "urn:oasis:names:tc:xliff:document:1.2"
_V2 = "urn:oasis:names:tc:xliff:document:2.0"
_OPEN_STATES_V1 = frozenset(("new", "needs-translation"))


@dataclass(frozen=True)
class _Slot:
    """A unit found in the file: its inline content, its label and whether it may be split.
    The translation goes to the target of the same unit (for a 1.2 segment, the `mrk` of
    that segment inside the target)."""

    unit: InlineUnit
    where: str
    split: bool


def _load(data: bytes) -> tuple[etree._ElementTree, str]:
    tree = parse_xml(data, NAME)
    root = tree.getroot()
    namespace = etree.QName(root).namespace or ""
    if etree.QName(root).localname != "xliff":
        raise InvalidDocumentError(f"{NAME}: the root element is <{etree.QName(root).localname}>, not <xliff>",
                                   field="file")
    if namespace == _V2 or root.get("version", "").startswith("2"):
        return tree, namespace or _V2
    if namespace in ("", _V1) or namespace.startswith("urn:oasis:names:tc:xliff:document:1."):
        return tree, namespace
    raise InvalidDocumentError(f"{NAME}: unknown XLIFF namespace {namespace!r}; supported: 1.2 and 2.x",
                               field="file")


def _q(namespace: str, name: str) -> str:
    return f"{{{namespace}}}{name}" if namespace else name


def _translate_no(element: Element) -> bool:
    """translate="no" on the element or the nearest ancestor that says."""
    for node in (element, *element.iterancestors()):
        if node.get("translate") in ("no", "yes"):
            return node.get("translate") == "no"
    return False


def _has_content(element: Element | None) -> bool:
    return element is not None and (bool((element.text or "").strip()) or len(element) > 0)


def _plan(tree: etree._ElementTree, namespace: str, apply: Sequence[Tree] | None) -> list[_Slot]:
    """Every slot, in document order; with `apply`, also writes translation i into slot i."""
    slots: list[_Slot] = []
    writer = _Writer(apply)
    if namespace == _V2:
        for unit in tree.getroot().iter(_q(namespace, "unit")):
            _plan_v2_unit(unit, namespace, slots, writer)
    else:
        for unit in tree.getroot().iter(_q(namespace, "trans-unit")):
            _plan_v1_unit(unit, namespace, slots, writer)
    return slots


class _Writer:
    """Hands out translations in slot order (or none while only planning)."""

    def __init__(self, translations: Sequence[Tree] | None) -> None:
        self._translations = translations
        self._next = 0

    @property
    def writing(self) -> bool:
        return self._translations is not None

    def take(self) -> Tree | None:
        if self._translations is None:
            return None
        tree = self._translations[self._next]
        self._next += 1
        return tree


def _plan_v1_unit(unit: Element, ns: str, slots: list[_Slot], writer: _Writer) -> None:
    source = unit.find(_q(ns, "source"))
    target = unit.find(_q(ns, "target"))
    if source is None or _translate_no(unit) or unit.get("approved") == "yes":
        return
    if _has_content(target) and target.get("state") not in _OPEN_STATES_V1:
        return
    segmented = unit.find(_q(ns, "seg-source"))
    origin = segmented if segmented is not None else source
    pieces = [m for m in origin.iter(_q(ns, "mrk")) if m.get("mtype") == "seg"] if segmented is not None else [origin]
    found = [(piece, read_inline(piece)) for piece in pieces]
    found = [(piece, read) for piece, read in found if read.translatable]
    if not found:
        return
    label = f"unit {unit.get('id', '?')}"
    for piece, read in found:
        where = label if piece is origin else f"{label} segment {piece.get('mid', '?')}"
        slots.append(_Slot(read, where, split=piece is origin))
    if not writer.writing:
        return
    target = _fresh_target(unit, origin, target, ns)
    target_pieces = [m for m in target.iter(_q(ns, "mrk")) if m.get("mtype") == "seg"] if segmented is not None \
        else [target]
    by_mid = {piece.get("mid"): piece for piece in target_pieces}
    for piece, read in found:
        destination = target if piece is origin else by_mid[piece.get("mid")]
        write_inline(destination, writer.take() or (), read.markup)
    target.set("state", "translated")
    target.set("state-qualifier", "mt-suggestion")


def _fresh_target(unit: Element, origin: Element, target: Element | None, ns: str) -> Element:
    """A target holding a copy of `origin`'s content, keeping an existing target's place and
    attributes; a new one goes after the source (and seg-source)."""
    fresh = etree.fromstring(etree.tostring(origin))
    fresh.tag = _q(ns, "target")
    fresh.attrib.clear()
    fresh.tail = None
    if target is not None:
        for name, value in target.attrib.items():
            fresh.set(name, value)
        fresh.tail = target.tail
        unit.replace(target, fresh)
        return fresh
    anchor = origin if origin.tag != _q(ns, "source") else unit.find(_q(ns, "source"))
    fresh.tail = anchor.tail
    anchor.addnext(fresh)
    return fresh


def _plan_v2_unit(unit: Element, ns: str, slots: list[_Slot], writer: _Writer) -> None:
    if _translate_no(unit):
        return
    for number, segment in enumerate(unit.iter(_q(ns, "segment")), start=1):
        source = segment.find(_q(ns, "source"))
        target = segment.find(_q(ns, "target"))
        if source is None:
            continue
        if _has_content(target) and segment.get("state") != "initial":
            continue
        read = read_inline(source)
        if not read.translatable:
            continue
        slots.append(_Slot(read, f"unit {unit.get('id', '?')} segment {segment.get('id', number)}", split=False))
        translation = writer.take()
        if translation is None:
            continue
        if target is None:
            target = source.makeelement(_q(ns, "target"), nsmap=None)
            target.tail = source.tail
            source.addnext(target)
        write_inline(target, translation, read.markup)
        segment.set("state", "translated")


class XliffDocument(LabelledDocument):
    def __init__(self, data: bytes) -> None:
        self._data = data
        tree, namespace = _load(data)
        self._units = tuple(Unit(slot.unit.text, split=slot.split, where=slot.where)
                            for slot in _plan(tree, namespace, None))

    @property
    def units(self) -> tuple[Unit, ...]:
        return self._units

    def _render(self, translations: Sequence[Tree], language: str | None) -> bytes:
        tree, namespace = _load(self._data)
        _plan(tree, namespace, translations)
        root = tree.getroot()
        if language and namespace == _V2:
            root.set("trgLang", language)
        elif language:
            for file in root.iter(_q(namespace, "file")):
                file.set("target-language", language)
        encoding = tree.docinfo.encoding or "UTF-8"
        return etree.tostring(tree, xml_declaration=True, encoding=encoding)


def parse(data: bytes) -> XliffDocument:
    return XliffDocument(data)


FORMAT = DocumentFormat(name=NAME, suffixes=(".xlf", ".xliff"), media_type=MEDIA_TYPE, parse=parse, text=True)
