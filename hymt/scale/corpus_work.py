"""CorpusWork: the rows translated so far, in a work file beside the output, for resuming.

Translations come back in input order, so the work file only grows: a header line with the
run's key (input file, columns, languages, options, model), then one JSON line per row. An
interrupted run leaves it behind; the same command reads it back, drops a line torn by the
interruption, and goes on after the last row it holds. Once the output is written, the work
file is removed. A work file of another run (other input or options) is an error, not
something to mix in.
"""
from __future__ import annotations

import json
from pathlib import Path

from hymt.errors import InvalidInputError
from hymt.scale.corpus_io import RowTranslation

WORK_SUFFIX = ".hymt-work.jsonl"
_HEADER = "hymt_corpus_work"


def work_path(output: str | Path) -> Path:
    output = Path(output)
    return output.with_name(output.name + WORK_SUFFIX)


class CorpusWork:
    """An open work file. `done` holds the rows translated so far, in input order."""

    def __init__(self, path: Path, done: list[RowTranslation]) -> None:
        self.path = path
        self.done = done
        self._file = path.open("a", encoding="utf-8", newline="\n")

    @classmethod
    def open(cls, output: str | Path, key: str) -> CorpusWork:
        """The work file of `output` for the run `key`: resumed when there is one, else new."""
        path = work_path(output)
        if not path.exists():
            path.write_text(json.dumps({_HEADER: 1, "key": key}) + "\n", encoding="utf-8")
            return cls(path, [])
        return cls(path, _read_back(path, key))

    def append(self, rows: list[RowTranslation]) -> None:
        """Record translated rows (the next ones in input order); on disk when this returns."""
        self._file.writelines(json.dumps({"t": r.translation, "s": r.source_lang}, ensure_ascii=False) + "\n"
                              for r in rows)
        self._file.flush()
        self.done.extend(rows)

    def close(self) -> None:
        self._file.close()

    def remove(self) -> None:
        self.close()
        self.path.unlink(missing_ok=True)


def _read_back(path: Path, key: str) -> list[RowTranslation]:
    """The rows of an earlier run; a torn last line (an interrupted write) is cut off."""
    raw = path.read_bytes()
    lines = raw.split(b"\n")
    try:
        header = json.loads(lines[0])
    except ValueError:
        header = None
    if not isinstance(header, dict) or _HEADER not in header:
        raise InvalidInputError(f"{path} is not a hymt corpus work file; remove it to start over", field="output")
    if header.get("key") != key:
        raise InvalidInputError(f"{path} holds a run with other input, columns, languages or options; "
                                "--overwrite starts over (or remove it)", field="output")
    done: list[RowTranslation] = []
    good = len(lines[0]) + 1
    for line in lines[1:-1]:  # the last piece follows the final newline: empty, or torn
        try:
            entry = json.loads(line)
        except ValueError:
            break
        done.append(RowTranslation(entry["t"], entry["s"]))
        good += len(line) + 1
    if good < len(raw):
        with path.open("r+b") as handle:
            handle.truncate(good)
    return done
