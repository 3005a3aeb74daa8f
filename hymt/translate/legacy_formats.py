"""The regex text formats as DocumentFormats, until the parser-based ones replace them."""
from __future__ import annotations

from collections.abc import Sequence

from hymt.documents.inline_tags import tree_text
from hymt.documents.units import DocumentFormat, ParsedDocument, Tree, Unit
from hymt.errors import InvalidDocumentError
from hymt.translate.formats import PARSERS, Run


class _RunsDocument(ParsedDocument):
    def __init__(self, runs: list[Run]) -> None:
        self._runs = runs
        self._units = tuple(Unit(r.text, split=r.sentences) for r in runs if not r.markup)

    @property
    def units(self) -> tuple[Unit, ...]:
        return self._units

    def render(self, translations: Sequence[Tree]) -> bytes:
        out, i = [], 0
        for run in self._runs:
            if run.markup:
                out.append(run.text)
            else:
                out.append(tree_text(translations[i]))
                i += 1
        return "".join(out).encode("utf-8")


def _parser(name: str):
    def parse(data: bytes) -> ParsedDocument:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidDocumentError(f"{name}: not UTF-8 ({exc})", field="text") from None
        return _RunsDocument(PARSERS[name](text))

    return parse


LEGACY_FORMATS = {
    name: DocumentFormat(name, (), "text/plain", _parser(name), text=True) for name in PARSERS
}
