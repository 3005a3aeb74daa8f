"""Corpus files in every format: rows read in order with their ids and source languages,
translations written beside them, and clear errors for what is missing."""
from __future__ import annotations

import csv
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hymt.errors import InvalidInputError
from hymt.scale.corpus_io import CorpusColumns, CorpusRow, RowTranslation, corpus_format, read_corpus, write_corpus

RECORDS = [{"uid": 7, "sentence": "Hello.", "lang": "en"}, {"uid": 3, "sentence": "", "lang": "en"},
           {"uid": 9, "sentence": "Bonjour, ça va ?", "lang": "fr"}]
COLUMNS = CorpusColumns(text="sentence", id="uid", source="lang")
EXPECTED_ROWS = [CorpusRow("Hello.", 7, "en"), CorpusRow("", 3, "en"), CorpusRow("Bonjour, ça va ?", 9, "fr")]
DONE = [RowTranslation("Hallo.", "en"), RowTranslation("", "en"), RowTranslation("Hallo, wie geht's?", "fr")]


def _write_input(path, fmt):
    if fmt == "jsonl":
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in RECORDS), encoding="utf-8")
    elif fmt in ("csv", "tsv"):
        with path.open("w", newline="", encoding="utf-8") as out:
            writer = csv.DictWriter(out, ["uid", "sentence", "lang"], delimiter="," if fmt == "csv" else "\t")
            writer.writeheader()
            writer.writerows(RECORDS)
    else:
        pq.write_table(pa.Table.from_pylist(RECORDS), path)


def _read_output(path, fmt):
    if fmt == "jsonl":
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    if fmt in ("csv", "tsv"):
        with path.open(newline="", encoding="utf-8") as handle:
            return list(csv.DictReader(handle, delimiter="," if fmt == "csv" else "\t"))
    return pq.read_table(path).to_pylist()


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "tsv", "parquet"])
def test_columns_in_order_and_translations_beside_them(tmp_path, fmt):
    source = tmp_path / f"in.{fmt}"
    _write_input(source, fmt)
    assert corpus_format(source) == fmt
    rows = read_corpus(source, fmt, COLUMNS)
    as_text = fmt in ("csv", "tsv")  # CSV cells are strings
    assert rows == [CorpusRow(r.text, str(r.id) if as_text else r.id, r.source) for r in EXPECTED_ROWS]
    target = tmp_path / f"out.{fmt}"
    write_corpus(target, fmt, rows, DONE, COLUMNS)
    written = _read_output(target, fmt)
    assert [list(r) for r in written] == [["uid", "sentence", "source_lang", "translation"]] * 3
    assert [(r["uid"], r["sentence"], r["translation"]) for r in written] == [
        (row.id, row.text, done.translation) for row, done in zip(rows, DONE)]


def test_plain_text_keeps_every_line_and_writes_one_translation_per_line(tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("first line\n\nthird line\r\nlast, no newline", encoding="utf-8")
    rows = read_corpus(source, "text")
    assert [r.text for r in rows] == ["first line", "", "third line", "last, no newline"]
    target = tmp_path / "out.txt"
    write_corpus(target, "text", rows, [RowTranslation("a"), RowTranslation(""), RowTranslation("two\nlines"),
                                        RowTranslation("d")])
    assert target.read_text(encoding="utf-8") == "a\n\ntwo lines\nd\n"
    with pytest.raises(InvalidInputError) as err:
        read_corpus(source, "text", CorpusColumns(text="x"))
    assert err.value.field == "column"


def test_headerless_tsv_names_columns_by_position(tmp_path):
    source = tmp_path / "pairs.tsv"
    source.write_text("Good morning.\tBonjour.\nThank you.\tMerci.\n", encoding="utf-8")
    assert [r.text for r in read_corpus(source, "tsv", header=False)] == ["Good morning.", "Thank you."]
    assert [r.text for r in read_corpus(source, "tsv", CorpusColumns(text="2"), header=False)] == ["Bonjour.", "Merci."]


@pytest.mark.parametrize(("columns", "field"), [
    (CorpusColumns(text="body"), "column"), (CorpusColumns(id="key"), "id_column"),
    (CorpusColumns(source="language"), "source_column")])
def test_a_missing_column_names_the_columns_there_are(tmp_path, columns, field):
    source = tmp_path / "in.jsonl"
    source.write_text('{"text": "Hi", "uid": 1}\n', encoding="utf-8")
    with pytest.raises(InvalidInputError, match="its columns: text, uid") as err:
        read_corpus(source, "jsonl", columns)
    assert err.value.field == field


def test_bad_jsonl_and_formats_are_clear_errors(tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_text('{"text": "Hi"}\nnot json\n', encoding="utf-8")
    with pytest.raises(InvalidInputError, match=r"in.jsonl:2 is not JSON"):
        read_corpus(source, "jsonl")
    with pytest.raises(InvalidInputError, match="format must be one of jsonl, csv, tsv, parquet, text"):
        corpus_format(source, "xml")
    assert corpus_format(tmp_path / "notes.md") == "text"
