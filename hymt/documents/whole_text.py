"""A text read whole: one unit, never split (templates that need the whole input at once,
such as Hy-MT2's delimiters and structured-data templates)."""
from __future__ import annotations

from collections.abc import Sequence

from hymt.documents.inline_tags import tree_text
from hymt.documents.units import ParsedDocument, Tree, Unit


class WholeText(ParsedDocument):
    """`text` as one unit; the whitespace around it stays outside the translation."""

    def __init__(self, text: str) -> None:
        core = text.strip()
        self._lead = text[: len(text) - len(text.lstrip())] if core else text
        self._trail = text[len(self._lead) + len(core):]
        self._units = (Unit(core, split=False),) if core else ()

    @property
    def units(self) -> tuple[Unit, ...]:
        return self._units

    def render(self, translations: Sequence[Tree]) -> bytes:
        body = tree_text(translations[0]) if self._units else ""
        return (self._lead + body + self._trail).encode("utf-8")
