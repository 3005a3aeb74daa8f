"""ResumeLog: the engine answers of a `hymt translate FILE` run, in a file, so that running the
same command again after an interruption (Ctrl+C, a crash, a closed laptop) asks the model
only for what it had not answered yet.

The log lives in the cache directory (`<cache dir>/resume/<key>.jsonl`), named by a hash of
everything that decides the answers: the file's bytes, the model, the languages and the
options. Each answer is appended as one JSON line and flushed at once; a line cut short by a
kill is ignored when the log is read again. The log is deleted once the translation is
written.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path
from typing import IO

from hymt.translate.cache import default_cache_path
from hymt.translate.output_log import RecordedOutput

logger = logging.getLogger(__name__)


def resume_key(data: bytes, settings: dict[str, object]) -> str:
    """The hash of a file and of every setting that shapes its translation (JSON-ready)."""
    digest = hashlib.sha256(data)
    digest.update(json.dumps(settings, sort_keys=True, ensure_ascii=False).encode("utf-8"))
    return digest.hexdigest()


def resume_path(key: str) -> Path:
    return default_cache_path().parent / "resume" / f"{key}.jsonl"


class ResumeLog:
    """An OutputLog (hymt.translate.output_log) in an append-only JSON-lines file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.answers: dict[str, RecordedOutput] = {}
        if path.is_file():
            self._read()
        self.recovered = len(self.answers)
        self._file: IO[str] | None = None

    def _read(self) -> None:
        with self.path.open(encoding="utf-8") as lines:
            for line in lines:
                try:
                    entry = json.loads(line)
                    self.answers[entry["key"]] = RecordedOutput.parse(tuple(entry["tokens"]), entry["finish"])
                except (ValueError, KeyError, TypeError):  # the line a kill cut short
                    logger.debug("skipping an unreadable line of %s", self.path)

    def get(self, key: str) -> RecordedOutput | None:
        return self.answers.get(key)

    def put(self, key: str, output: RecordedOutput) -> None:
        if self._file is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = self.path.open("a", encoding="utf-8")
            if self._file.tell() and not _ends_with_newline(self.path):
                self._file.write("\n")  # after a cut-short line: start a fresh one
        self._file.write(json.dumps({"key": key, "tokens": list(output.token_ids),
                                     "finish": output.finish_reason}) + "\n")
        self._file.flush()  # in the OS's hands: a killed process loses nothing written
        self.answers[key] = output

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def remove(self) -> None:
        """Delete the log (the translation it served is written)."""
        self.close()
        self.path.unlink(missing_ok=True)


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as raw:
        raw.seek(-1, os.SEEK_END)
        return raw.read(1) == b"\n"
