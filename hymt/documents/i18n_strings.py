"""Localisation files that are a tree of keys and strings: JSON (i18next, FormatJS, ARB,
Chrome/WebExtension messages, plain key files) and YAML (Rails, Symfony, Hugo).

Every string value is one unit, never split, in document order, with its key path as
`Unit.where`; keys, numbers, booleans, nulls and the structure are not units. Strings
without a letter outside placeholders, and strings that are a URL or e-mail address alone,
are not sent. Values under a key starting with "@" (ARB metadata such as "@title":
{"description": …}) are descriptions for translators, not messages, and are not sent either.
Placeholders, ICU messages and HTML-ish tags are tags (placeholders.py).

The codecs (json_format.py, yaml_format.py) read and write the tree; this module walks it.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from hymt.documents.placeholders import I18N
from hymt.documents.safety import MAX_NODES
from hymt.documents.unit_text import StringUnit, read_string
from hymt.documents.units import ParsedDocument, Tree, Unit
from hymt.errors import InvalidDocumentError

_METADATA_PREFIX = "@"


class Codec(ABC):
    """How one file format reads and writes the tree of keys and strings."""

    name: str

    @abstractmethod
    def load(self, data: bytes) -> object:
        """The file's tree (dicts, lists, strings, other scalars); InvalidDocumentError if unreadable."""

    @abstractmethod
    def dump(self, tree: object, data: bytes) -> bytes:
        """The tree written as the original `data` was (indentation, final newline)."""

    def replace(self, old: str, new: str) -> str:
        """The value to store for translated `new` where `old` was (YAML keeps its style)."""
        return new


@dataclass(frozen=True)
class _Slot:
    """A string value to translate at container[key]; or, with `alias_of`, the same string
    object as slot `alias_of` (a YAML alias), written with that slot's translation."""

    container: dict[object, object] | list[object]
    key: object
    path: str
    string: StringUnit | None
    alias_of: int | None = None

    def get(self) -> object:
        if isinstance(self.container, list):
            assert isinstance(self.key, int)
            return self.container[self.key]
        return self.container[self.key]

    def set(self, value: object) -> None:
        if isinstance(self.container, list):
            assert isinstance(self.key, int)
            self.container[self.key] = value
        else:
            self.container[self.key] = value


def _children(node: object, path: str) -> Iterator[tuple[object, object, str, dict[object, object] | list[object]]]:
    if isinstance(node, dict):
        for key, value in node.items():
            if not (isinstance(key, str) and key.startswith(_METADATA_PREFIX)):
                yield key, value, f"{path}.{key}" if path else str(key), node
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield index, value, f"{path}[{index}]", node


def _slots(root: object, name: str) -> list[_Slot]:
    """The string values in document order; each container walked once however often it is
    named (YAML aliases)."""
    slots: list[_Slot] = []
    first_slot: dict[int, int] = {}
    seen = {id(root)}
    stack = [_children(root, "")]
    count = 0
    while stack:
        step = next(stack[-1], None)
        if step is None:
            stack.pop()
            continue
        count += 1
        if count > MAX_NODES:
            raise InvalidDocumentError(f"{name}: the file has more than {MAX_NODES} values", field="file")
        key, value, path, container = step
        if isinstance(value, str) and id(value) in first_slot:
            slots.append(_Slot(container, key, path, None, alias_of=first_slot[id(value)]))
        elif isinstance(value, str):
            string = read_string(value, I18N)
            if string is not None:
                first_slot[id(value)] = len(slots)
                slots.append(_Slot(container, key, path, string))
        elif isinstance(value, dict | list) and id(value) not in seen:
            seen.add(id(value))
            stack.append(_children(value, path))
    return slots


class StringTreeDocument(ParsedDocument):
    def __init__(self, data: bytes, codec: Codec) -> None:
        self._data = data
        self._codec = codec
        slots = _slots(codec.load(data), codec.name)
        self._units = tuple(Unit(slot.string.text, split=False, where=slot.path) for slot in slots
                            if slot.string is not None)

    @property
    def units(self) -> tuple[Unit, ...]:
        return self._units

    def render(self, translations: Sequence[Tree]) -> bytes:
        tree = self._codec.load(self._data)
        written: list[object] = []
        position = 0
        for slot in _slots(tree, self._codec.name):
            if slot.string is not None:
                old = slot.get()
                assert isinstance(old, str)
                new: object = self._codec.replace(old, slot.string.render(translations[position]))
                position += 1
            else:
                assert slot.alias_of is not None
                new = written[slot.alias_of]
            written.append(new)
            slot.set(new)
        return self._codec.dump(tree, self._data)
