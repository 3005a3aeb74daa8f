"""The data an evaluation translates: source sentences, their references, and the languages.

Three layouts, one sentence per line each:
  - two plain-text files (WMT, FLORES files given one by one): `Corpus.from_files(src, ref)`;
  - a TSV file with a source and a reference column: `Corpus.from_tsv(path, columns)`;
  - a FLORES-200 directory and two FLORES codes: `Corpus.from_flores(dir, eng_Latn, zho_Hans)`.
Every error names the command-line option it comes from (`--src`, `--ref`, `--tsv`, ...).
"""
from __future__ import annotations

import csv
import hashlib
from dataclasses import dataclass
from pathlib import Path

from hymt.errors import InvalidInputError
from hymt.eval.flores import language_from_filename, split_file
from hymt.languages import Language


@dataclass(frozen=True)
class Corpus:
    """Sentences to translate and score.

    Attributes:
        sources: the source sentences, one per line of the input (never blank).
        references: the reference translations, aligned with `sources`; None when the data
            has none (then only output-against-output comparisons are possible).
        source: the source language; None detects it per sentence.
        target: the language to translate into.
        origin: where the data came from, for the report ("src.txt + ref.txt", ...).
        source_path / reference_path: the files read (the TSV file for both with --tsv).
    """

    sources: tuple[str, ...]
    references: tuple[str, ...] | None
    source: Language | None
    target: Language
    origin: str
    source_path: Path
    reference_path: Path | None = None

    def __post_init__(self) -> None:
        if not self.sources:
            raise InvalidInputError(f"{self.origin} has no sentences", field="src")
        if self.references is not None and len(self.references) != len(self.sources):
            raise InvalidInputError(
                f"the source has {len(self.sources)} lines but the reference has {len(self.references)} "
                f"({self.origin}); they must be line-aligned", field="ref",
            )
        for i, text in enumerate(self.sources, start=1):
            if not text.strip():
                raise InvalidInputError(f"{self.origin}: source line {i} is blank; every line must be a sentence",
                                        field="src")

    def __len__(self) -> int:
        return len(self.sources)

    def digest(self) -> str:
        """sha256 of the source sentences and languages: what a run's outputs depend on."""
        h = hashlib.sha256()
        h.update(f"{self.source.code if self.source else 'auto'}>{self.target.code}\n".encode())
        for text in self.sources:
            h.update(text.encode("utf-8") + b"\n")
        return h.hexdigest()

    def describe(self) -> dict[str, object]:
        """The corpus for a report: origin, size, languages, files, digest."""
        return {"origin": self.origin, "sentences": len(self.sources),
                "source": self.source.code if self.source else "auto", "target": self.target.code,
                "references": self.references is not None, "source_file": str(self.source_path),
                "reference_file": str(self.reference_path) if self.reference_path else None,
                "digest": self.digest()}

    def head(self, limit: int | None) -> Corpus:
        """The first `limit` sentences (all when None)."""
        if limit is None or limit >= len(self.sources):
            return self
        if limit < 1:
            raise InvalidInputError(f"--limit must be a positive number, got {limit}", field="limit")
        refs = self.references[:limit] if self.references is not None else None
        return Corpus(self.sources[:limit], refs, self.source, self.target, f"{self.origin}, first {limit}",
                      self.source_path, self.reference_path)

    @classmethod
    def from_files(cls, src: Path, ref: Path | None, *, source: Language | None,
                   target: Language | None) -> Corpus:
        """Plain-text files, one sentence per line; missing languages come from FLORES-style
        file names (`devtest.eng_Latn`)."""
        sources = read_lines(src, "--src")
        references = read_lines(ref, "--ref") if ref is not None else None
        if references is not None and len(references) != len(sources):
            raise InvalidInputError(
                f"--src {src} has {len(sources)} lines but --ref {ref} has {len(references)}; "
                f"they must be line-aligned", field="ref",
            )
        source = source or language_from_filename(src)
        target = target or (language_from_filename(ref) if ref is not None else None)
        origin = f"{src} + {ref}" if ref is not None else str(src)
        return cls(tuple(sources), _tuple(references), source, _need_target(target), origin, src, ref)

    @classmethod
    def from_tsv(cls, path: Path, columns: tuple[str, str] | None, *, header: bool,
                 source: Language | None, target: Language | None) -> Corpus:
        """A TSV file: `columns` names the source and reference columns (header names, or
        1-based numbers); None takes the first two. A header row is read when `header` is
        set or the columns are given by name."""
        rows = _tsv_rows(path)
        by_name = columns is not None and not all(c.isdigit() for c in columns)
        if header or by_name:
            head, rows = rows[0], rows[1:]
            picks = _column_indexes(columns, head, path) if columns else (0, 1)
        else:
            picks = _column_indexes(columns, None, path) if columns else (0, 1)
        if not rows:
            raise InvalidInputError(f"--tsv {path} has no data rows", field="tsv")
        width = max(picks) + 1
        for i, row in enumerate(rows, start=2 if header or by_name else 1):
            if len(row) < width:
                raise InvalidInputError(
                    f"--tsv {path} line {i} has {len(row)} column(s); column {width} is needed", field="tsv")
        sources = tuple(row[picks[0]] for row in rows)
        references = tuple(row[picks[1]] for row in rows)
        origin = f"{path} (columns {picks[0] + 1} and {picks[1] + 1})"
        return cls(sources, references, source, _need_target(target), origin, path, path)

    @classmethod
    def from_flores(cls, directory: Path, source: Language, target: Language, split: str) -> Corpus:
        """A FLORES-200 (or FLORES+) directory: `split` files of the two languages."""
        src = split_file(directory, source, split, "--from")
        ref = split_file(directory, target, split, "--to")
        return cls.from_files(src, ref, source=source, target=target)


def read_lines(path: Path, option: str) -> list[str]:
    """A UTF-8 file's lines without their line ends (a BOM and one final newline dropped).

    Raises:
        InvalidInputError: missing, unreadable, not UTF-8 or empty; naming `option`.
    """
    field = option.lstrip("-")
    if not path.is_file():
        raise InvalidInputError(f"{option} {path}: no such file", field=field)
    try:
        with path.open(encoding="utf-8-sig", newline=None) as f:
            text = f.read()
    except UnicodeDecodeError as exc:
        raise InvalidInputError(f"{option} {path} is not UTF-8 text: {exc}", field=field) from None
    if not text.strip():
        raise InvalidInputError(f"{option} {path} is empty", field=field)
    lines = text.split("\n")
    return lines[:-1] if lines[-1] == "" else lines


def _tsv_rows(path: Path) -> list[list[str]]:
    lines = read_lines(path, "--tsv")
    # QUOTE_NONE: sentences carry quotes of their own; a tab is the only separator.
    return list(csv.reader(lines, delimiter="\t", quoting=csv.QUOTE_NONE))


def _column_indexes(columns: tuple[str, str], head: list[str] | None, path: Path) -> tuple[int, int]:
    picks = []
    for column in columns:
        if column.isdigit():
            if int(column) < 1:
                raise InvalidInputError(f"--columns counts from 1, got {column}", field="columns")
            picks.append(int(column) - 1)
        elif head is not None and column in head:
            picks.append(head.index(column))
        else:
            names = ", ".join(head) if head else "(no header row)"
            raise InvalidInputError(f"--columns: {path} has no column {column!r}; its columns: {names}",
                                    field="columns")
    return picks[0], picks[1]


def _need_target(target: Language | None) -> Language:
    if target is None:
        raise InvalidInputError("--to is required (the target language), unless the reference file is named "
                                "like devtest.zho_Hans", field="to")
    return target


def _tuple(values: list[str] | None) -> tuple[str, ...] | None:
    return tuple(values) if values is not None else None
