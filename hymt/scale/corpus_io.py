"""Corpus files: JSONL, CSV, TSV, Parquet and plain text, read into rows and written back.

A row is one text to translate, with the id and the per-row source language when the file
has columns for them. Reading keeps the file's order; writing puts each translation beside
its id and source text, in the same order (plain text: one translation per line).

    read_corpus(path, "jsonl", CorpusColumns(text="sentence", id="uid"))  -> [CorpusRow]
    write_corpus(path, "parquet", rows, translations, columns)
"""
from __future__ import annotations

import csv
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from hymt.errors import InvalidInputError

CORPUS_FORMATS = ("jsonl", "csv", "tsv", "parquet", "text")
_SUFFIX_FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".tsv": "tsv", ".parquet": "parquet",
                   ".txt": "text", ".text": "text"}
#: The text column when none is named: "text", or the first column of a file without a header.
DEFAULT_TEXT_COLUMN = "text"
#: Output columns hymt adds beside the input's.
TRANSLATION_COLUMN = "translation"
SOURCE_LANG_COLUMN = "source_lang"

CorpusId = str | int | float | None


@dataclass(frozen=True)
class CorpusColumns:
    """Which columns hold what. `text` None: "text" (with a header) or "1" (without one)."""

    text: str | None = None
    id: str | None = None
    source: str | None = None  # a per-row source language (code or name)


@dataclass(frozen=True)
class CorpusRow:
    """One text of the corpus: its id (when there is an id column) and source language (when
    there is a source column); `text` may be blank."""

    text: str
    id: CorpusId = None
    source: str | None = None


@dataclass(frozen=True)
class RowTranslation:
    """What became of one row: the translation and the source language it was read as."""

    translation: str
    source_lang: str | None = None


def corpus_format(path: str | Path, explicit: str | None = None) -> str:
    """`explicit`, else the format of the file suffix; other suffixes are plain text."""
    if explicit is not None:
        if explicit not in CORPUS_FORMATS:
            raise InvalidInputError(f"format must be one of {', '.join(CORPUS_FORMATS)}, got {explicit!r}",
                                    field="format")
        return explicit
    return suffix_format(path) or "text"


def suffix_format(path: str | Path) -> str | None:
    """The format a file suffix names (.jsonl, .csv, .tsv, .parquet, .txt), or None."""
    return _SUFFIX_FORMATS.get(Path(path).suffix.lower())


def read_corpus(path: str | Path, fmt: str, columns: CorpusColumns = CorpusColumns(), *,
                header: bool = True) -> list[CorpusRow]:
    """Every row of `path`, in file order. A missing column is an error naming the columns
    there are; `header` False (CSV/TSV) names the columns "1", "2", ... by position."""
    path = Path(path)
    if fmt == "text":
        if columns != CorpusColumns():
            raise InvalidInputError("a plain-text corpus has no columns: one text per line", field="column")
        return [CorpusRow(line) for line in _text_lines(path)]
    records = _records(path, fmt, header)
    text_column = columns.text or (DEFAULT_TEXT_COLUMN if header or fmt not in ("csv", "tsv") else "1")
    rows = []
    for number, record in enumerate(records, 1):
        if number == 1:
            _check_columns(record, (text_column, columns.id, columns.source), path)
        text = record.get(text_column)
        source = record.get(columns.source) if columns.source else None
        rows.append(CorpusRow("" if text is None else str(text), _corpus_id(record.get(columns.id)) if columns.id
                              else None, str(source) if source not in (None, "") else None))
    return rows


def write_corpus(path: str | Path, fmt: str, rows: Sequence[CorpusRow], translations: Sequence[RowTranslation],
                 columns: CorpusColumns = CorpusColumns()) -> None:
    """The translated corpus: per row its id (when an id column was read), its source text,
    the source language (when detected or read per row) and the translation."""
    path = Path(path)
    if fmt == "text":
        with path.open("w", encoding="utf-8", newline="\n") as out:
            # one line per row, whatever line breaks (\n, \r, U+2028, ...) a translation holds
            out.writelines(" ".join(t.translation.splitlines()) + "\n" for t in translations)
        return
    names = _output_columns(columns, translations)
    records = (_output_record(names, columns, row, done) for row, done in zip(rows, translations, strict=True))
    if fmt == "jsonl":
        with path.open("w", encoding="utf-8", newline="\n") as out:
            out.writelines(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
    elif fmt in ("csv", "tsv"):
        with path.open("w", encoding="utf-8", newline="") as out:
            writer = csv.DictWriter(out, fieldnames=list(names), delimiter="\t" if fmt == "tsv" else ",")
            writer.writeheader()
            writer.writerows(records)
    elif fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(list(records)), path)
    else:
        raise InvalidInputError(f"format must be one of {', '.join(CORPUS_FORMATS)}, got {fmt!r}", field="format")


def _text_lines(path: Path) -> Iterator[str]:
    with path.open(encoding="utf-8", newline="") as lines:
        for line in lines:
            yield line.rstrip("\r\n")


def _records(path: Path, fmt: str, header: bool) -> Iterator[dict[str, object]]:
    if fmt == "jsonl":
        yield from _jsonl_records(path)
    elif fmt in ("csv", "tsv"):
        yield from _delimited_records(path, "\t" if fmt == "tsv" else ",", header)
    elif fmt == "parquet":
        yield from _parquet_records(path)
    else:
        raise InvalidInputError(f"format must be one of {', '.join(CORPUS_FORMATS)}, got {fmt!r}", field="format")


def _jsonl_records(path: Path) -> Iterator[dict[str, object]]:
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InvalidInputError(f"{path}:{number} is not JSON: {exc}", field="input") from exc
            if not isinstance(record, dict):
                raise InvalidInputError(f"{path}:{number} is not a JSON object", field="input")
            yield record


def _delimited_records(path: Path, delimiter: str, header: bool) -> Iterator[dict[str, object]]:
    with path.open(encoding="utf-8", newline="") as handle:
        if header:
            yield from csv.DictReader(handle, delimiter=delimiter)
            return
        for cells in csv.reader(handle, delimiter=delimiter):
            yield {str(i): cell for i, cell in enumerate(cells, 1)}


def _parquet_records(path: Path) -> Iterator[dict[str, object]]:
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:
        from hymt.scale.ray_import import RAY_INSTALL

        raise InvalidInputError(f"reading Parquet needs pyarrow: {RAY_INSTALL} (or pip install pyarrow)",
                                field="input") from exc
    for batch in pq.ParquetFile(path).iter_batches():
        yield from batch.to_pylist()


def _corpus_id(value: object) -> CorpusId:
    """An id as read (a JSON or Parquet number stays a number); other values as text."""
    return value if value is None or isinstance(value, (str, int, float)) else str(value)


def _check_columns(record: dict[str, object], wanted: Sequence[str | None], path: Path) -> None:
    fields = ("column", "id_column", "source_column")
    for field, name in zip(fields, wanted):
        if name is not None and name not in record:
            raise InvalidInputError(f"{path} has no column {name!r}; its columns: {', '.join(map(str, record))}",
                                    field=field)


def _output_columns(columns: CorpusColumns, translations: Sequence[RowTranslation]) -> tuple[str, ...]:
    names = [columns.id] if columns.id else []
    names.append(columns.text or DEFAULT_TEXT_COLUMN)
    if any(t.source_lang for t in translations):
        names.append(SOURCE_LANG_COLUMN)
    names.append(TRANSLATION_COLUMN)
    return tuple(dict.fromkeys(names))


def _output_record(names: tuple[str, ...], columns: CorpusColumns, row: CorpusRow,
                   done: RowTranslation) -> dict[str, object]:
    record: dict[str, object] = {}
    if columns.id:
        record[columns.id] = row.id
    record[columns.text or DEFAULT_TEXT_COLUMN] = row.text
    if SOURCE_LANG_COLUMN in names:
        record[SOURCE_LANG_COLUMN] = done.source_lang
    record[TRANSLATION_COLUMN] = done.translation
    return record
