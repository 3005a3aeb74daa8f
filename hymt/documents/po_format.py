"""gettext catalogues (.po, .pot) through polib.

Which entries are translated:
- untranslated entries (empty msgstr, or every msgstr[n] empty): translated;
- fuzzy entries: translated afresh from their msgid, and they stay marked fuzzy (the flag is
  a reviewer's to clear; their previous msgid comments stay);
- translated entries: kept as they are, not sent;
- obsolete entries (`#~`) and the header entry: kept as they are, not sent.

Each message is one unit, never split, with its msgctxt as `Unit.context`. Placeholders are
tags (placeholders.py); the entry's flags turn families off: `no-c-format` and
`no-python-format` (a `%` that is not a directive), `no-python-brace-format`.

Plurals: msgid and msgid_plural are two units. The target language's Plural-Forms (from
Babel's CLDR data) says how many msgstr[n] to write: the form that n = 1 selects gets the
translated singular, every other form the translated plural; a language with one form gets
the plural. When the file already names the target language with a valid Plural-Forms, that
header is kept. Without a known target language (`render` rather than `render_for`), the
header's own Plural-Forms is used, else gettext's default of two forms.

The output is UTF-8 (the header's charset says so), wrapped by polib as gettext does.
"""
from __future__ import annotations

import gettext
import re
from collections.abc import Sequence
from dataclasses import dataclass

import polib
from babel.core import UnknownLocaleError
from babel.messages.plurals import get_plural

from hymt.documents.placeholders import I18N, Syntax
from hymt.documents.unit_text import StringUnit, read_string
from hymt.documents.units import DocumentFormat, LabelledDocument, Tree, Unit
from hymt.errors import InvalidDocumentError

NAME = "po"
MEDIA_TYPE = "text/x-gettext-translation"

#: Flags that say a family of placeholders is not one in this message.
_FLAGS_OFF = {"no-c-format": Syntax.PRINTF, "no-python-format": Syntax.PRINTF, "no-php-format": Syntax.PRINTF,
              "no-python-brace-format": Syntax.BRACES}
_PLURAL_FORMS = re.compile(r"^\s*nplurals\s*=\s*(\d+)\s*;\s*plural\s*=\s*(.+?)\s*;?\s*$")
_GERMANIC = (2, "(n != 1)")


@dataclass(frozen=True)
class _Form:
    """msgid or msgid_plural: its unit's number, or None with `source` as its own translation
    (a message without a letter, "%d")."""

    source: str
    string: StringUnit | None
    unit: int | None

    def text(self, translations: Sequence[Tree]) -> str:
        if self.string is None or self.unit is None:
            return self.source
        return self.string.render(translations[self.unit])


@dataclass(frozen=True)
class _Message:
    """A message to translate: entry `index`, its singular and (plural entries) its plural."""

    index: int
    singular: _Form
    plural: _Form | None


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        head = data[:4096].decode("latin-1")
        match = re.search(r"charset=([\w.-]+)", head)
        try:
            return data.decode(match.group(1) if match else "latin-1")
        except (LookupError, UnicodeDecodeError) as exc:
            raise InvalidDocumentError(f"{NAME}: the file's text encoding cannot be read: {exc}",
                                       field="file") from exc


def _load(data: bytes) -> polib.POFile:
    if not data.strip():
        raise InvalidDocumentError(f"{NAME}: the file is empty", field="file")
    try:
        return polib.pofile(_decode(data), wrapwidth=78)
    except (OSError, ValueError) as exc:
        raise InvalidDocumentError(f"{NAME}: the file is not a valid gettext catalogue: {exc}", field="file") from exc


def _wanted(entry: polib.POEntry) -> bool:
    if entry.obsolete or entry.msgid == "":
        return False
    if "fuzzy" in entry.flags:
        return True
    if entry.msgid_plural:
        return not any(entry.msgstr_plural.values())
    return not entry.msgstr


def _syntaxes(entry: polib.POEntry) -> Syntax:
    syntaxes = I18N
    for flag in entry.flags:
        syntaxes &= ~_FLAGS_OFF.get(flag, Syntax(0))
    return syntaxes


def _plural_forms(header: str) -> tuple[int, str] | None:
    match = _PLURAL_FORMS.match(header or "")
    if match is None or int(match.group(1)) < 1:
        return None
    try:
        gettext.c2py(match.group(2))
    except (ValueError, SyntaxError, RecursionError):
        return None
    return int(match.group(1)), match.group(2)


def _target_plural_forms(language: str) -> tuple[int, str]:
    try:
        plural = get_plural(language.replace("-", "_"))
    except (UnknownLocaleError, ValueError):
        return _GERMANIC
    return plural.num_plurals, plural.plural_expr


class PoDocument(LabelledDocument):
    def __init__(self, data: bytes) -> None:
        self._data = data
        catalogue = _load(data)
        self._messages: list[_Message] = []
        units: list[Unit] = []
        for index, entry in enumerate(catalogue):
            if not _wanted(entry):
                continue
            forms = [(entry.msgid, read_string(entry.msgid, _syntaxes(entry)), "")]
            if entry.msgid_plural:
                forms.append((entry.msgid_plural, read_string(entry.msgid_plural, _syntaxes(entry)), " plural"))
            if all(string is None for _, string, _ in forms):
                continue
            made = []
            for source, string, label in forms:
                made.append(_Form(source, string, len(units) if string is not None else None))
                if string is not None:
                    units.append(Unit(string.text, split=False, context=entry.msgctxt or "",
                                      where=f"line {entry.linenum}{label}"))
            self._messages.append(_Message(index, made[0], made[1] if len(made) > 1 else None))
        self._units = tuple(units)

    @property
    def units(self) -> tuple[Unit, ...]:
        return self._units

    def _render(self, translations: Sequence[Tree], language: str | None) -> bytes:
        catalogue = _load(self._data)
        count, expression = self._header(catalogue, language)
        singular_form = gettext.c2py(expression)(1) if count > 1 else -1
        entries = list(catalogue)
        for message in self._messages:
            entry = entries[message.index]
            singular = message.singular.text(translations)
            if message.plural is None:
                entry.msgstr = singular
                continue
            plural = message.plural.text(translations)
            entry.msgstr_plural = {n: singular if n == singular_form else plural for n in range(count)}
        return catalogue.__unicode__().encode("utf-8")

    @staticmethod
    def _header(catalogue: polib.POFile, language: str | None) -> tuple[int, str]:
        """The number of plural forms and their expression to write, with the header set."""
        catalogue.metadata["Content-Type"] = "text/plain; charset=UTF-8"
        own = _plural_forms(catalogue.metadata.get("Plural-Forms", ""))
        if language is None:
            return own or _GERMANIC
        same = catalogue.metadata.get("Language", "").replace("_", "-").lower() == language.lower()
        if same and own is not None:
            return own
        count, expression = _target_plural_forms(language)
        catalogue.metadata["Language"] = language.replace("-", "_")
        catalogue.metadata["Plural-Forms"] = f"nplurals={count}; plural={expression};"
        return count, expression


def parse(data: bytes) -> PoDocument:
    return PoDocument(data)


FORMAT = DocumentFormat(name=NAME, suffixes=(".po", ".pot"), media_type=MEDIA_TYPE, parse=parse, text=True,
                        output_suffix=".po")
