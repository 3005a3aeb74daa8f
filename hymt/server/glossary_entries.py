"""Glossary entries as DeepL clients send them: TSV or CSV text, one `source, target` pair a line.

Rules (docs/reference/protocols.md §2.3, glossaries):
- TSV: `source<TAB>target`; a line with no tab or with two tabs is an error.
- CSV: RFC 4180 (quoted fields, doubled quotes); DeepL's exported files add
  `source_lang,target_lang` columns: a line whose language columns name another pair is
  skipped, as DeepL skips it.
- Blank lines are skipped; whitespace around a term is dropped.
- A term is not empty, holds no control character or line separator, and has at most
  `max_term_bytes` UTF-8 bytes (DeepL: 1024).
- A source term appears once per dictionary.

The stored form is canonical TSV (`entries_tsv`): terms never hold a tab or newline, so it
parses back unambiguously.
"""
from __future__ import annotations

import csv
import io
import re
import unicodedata
from collections.abc import Sequence

from hymt.errors import InvalidInputError

ENTRIES_FORMATS = ("tsv", "csv")
#: Why DeepL refuses a set of entries; the detail follows it after a colon.
INVALID_ENTRIES = "Invalid glossary entries provided"

Entries = tuple[tuple[str, str], ...]
_LINES = re.compile(r"\r\n|\r|\n")


class InvalidEntriesError(InvalidInputError):
    """Entries that cannot be stored; the message starts with DeepL's wording."""

    def __init__(self, detail: str) -> None:
        super().__init__(f"{INVALID_ENTRIES}: {detail}", field="entries")


def parse_entries(text: str, entries_format: str, *, source_lang: str, target_lang: str,
                  max_term_bytes: int) -> Entries:
    """`text` in `entries_format` ("tsv" or "csv") as (source, target) pairs, in order.

    `source_lang` / `target_lang` are the dictionary's codes (lower case): CSV lines that
    name another pair in their language columns are skipped."""
    if entries_format not in ENTRIES_FORMATS:
        raise InvalidInputError(
            f"Value for 'entries_format' not supported. Got {entries_format!r}; valid: {', '.join(ENTRIES_FORMATS)}",
            field="entries_format")
    rows = _tsv_rows(text) if entries_format == "tsv" else _csv_rows(text, source_lang, target_lang)
    pairs: list[tuple[str, str]] = []
    first_line: dict[str, int] = {}
    for line, source, target in rows:
        source, target = _term(source, line, max_term_bytes), _term(target, line, max_term_bytes)
        if source in first_line:
            raise InvalidEntriesError(f"line {line} repeats the source term {source!r} of line {first_line[source]}")
        first_line[source] = line
        pairs.append((source, target))
    if not pairs:
        raise InvalidEntriesError("there are no entries")
    return tuple(pairs)


def _tsv_rows(text: str) -> list[tuple[int, str, str]]:
    rows = []
    for number, line in enumerate(_LINES.split(text), 1):
        if not line.strip():
            continue
        cells = line.split("\t")
        if len(cells) != 2:
            what = "has no tab between source and target" if len(cells) < 2 else "has more than one tab"
            raise InvalidEntriesError(f"line {number} {what}")
        rows.append((number, cells[0], cells[1]))
    return rows


def _csv_rows(text: str, source_lang: str, target_lang: str) -> list[tuple[int, str, str]]:
    rows = []
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        for cells in reader:
            number = reader.line_num
            if not any(cell.strip() for cell in cells):
                continue
            if len(cells) < 2:
                raise InvalidEntriesError(f"line {number} has no comma between source and target")
            if len(cells) >= 4 and cells[2].strip() and cells[3].strip() and (
                    cells[2].strip().lower(), cells[3].strip().lower()) != (source_lang, target_lang):
                continue
            rows.append((number, cells[0], cells[1]))
    except csv.Error as exc:
        raise InvalidEntriesError(f"line {reader.line_num} is not valid CSV: {exc}") from None
    return rows


def _term(raw: str, line: int, max_term_bytes: int) -> str:
    term = raw.strip()
    if not term:
        raise InvalidEntriesError(f"line {line} has an empty term")
    bad = next((ch for ch in term if unicodedata.category(ch) in ("Cc", "Zl", "Zp")), None)
    if bad is not None:
        raise InvalidEntriesError(f"line {line}: the term {term!r} holds the control character U+{ord(bad):04X}")
    size = len(term.encode("utf-8"))
    if size > max_term_bytes:
        raise InvalidEntriesError(f"line {line}: a term has {size} UTF-8 bytes; the limit is {max_term_bytes}")
    return term


def entries_tsv(entries: Sequence[tuple[str, str]]) -> str:
    """The canonical TSV of `entries` (what the store keeps and DeepL's entry calls return)."""
    return "\n".join(f"{source}\t{target}" for source, target in entries)


def merge_entries(old: Entries, new: Entries) -> Entries:
    """`old` with `new` applied: a new source term is appended, a known one gets the new target."""
    merged = dict(old)
    merged.update(new)
    return tuple(merged.items())
