"""Resumable outputs: each pass over a corpus appends its finished chunks to a work file, so a
run stopped half-way (or started again with the same arguments) skips what is done.

The file is `<work dir>/<key>.jsonl`, one JSON chunk record a line, flushed to disk as each
chunk ends. The key is a hash of everything the outputs depend on (model, scheme, options,
data, chunk size: `run_key`), so a changed argument starts a fresh file instead of mixing
outputs. A line cut short by a crash is ignored and its chunk translated again.
"""
from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

from hymt.errors import InvalidInputError

KEY_CHARS = 20
#: Sentences per chunk: one translate_batch call and one work-file record.
DEFAULT_CHUNK_SIZE = 128


def run_key(parts: Mapping[str, object]) -> str:
    """A short stable hash of `parts` (JSON-serialisable values, `repr` for the rest)."""
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=repr)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:KEY_CHARS]


@dataclass(frozen=True)
class ChunkRecord:
    """One finished chunk of a pass.

    Attributes:
        start: index of its first sentence in the corpus.
        outputs: its translations, one per sentence, on one line each.
        requests: engine requests it took (quality-guard retries included).
        prompt_tokens / completion_tokens: tokens the engine computed for it.
        elapsed_s: wall time of its translate call(s).
        issues: quality-guard issue codes left on its outputs, with counts.
    """

    start: int
    outputs: tuple[str, ...]
    requests: int
    prompt_tokens: int
    completion_tokens: int
    elapsed_s: float
    issues: dict[str, int] = field(default_factory=dict)

    @property
    def end(self) -> int:
        return self.start + len(self.outputs)

    def to_json(self) -> str:
        return json.dumps({**asdict(self), "outputs": list(self.outputs)}, ensure_ascii=False)

    @classmethod
    def from_json(cls, line: str) -> ChunkRecord:
        data = json.loads(line)
        return cls(int(data["start"]), tuple(str(t) for t in data["outputs"]), int(data["requests"]),
                   int(data["prompt_tokens"]), int(data["completion_tokens"]), float(data["elapsed_s"]),
                   {str(k): int(v) for k, v in data.get("issues", {}).items()})


class ChunkStore:
    """The work file of one pass: finished chunks by start index."""

    def __init__(self, directory: Path, key: str, meta: Mapping[str, object]) -> None:
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InvalidInputError(f"--work-dir {directory} cannot be created: {exc}", field="work_dir") from None
        self.path = directory / f"{key}.jsonl"
        self.key = key
        meta_path = directory / f"{key}.json"  # what the key stands for, for whoever opens the folder
        if not meta_path.exists():
            meta_path.write_text(json.dumps(meta, indent=2, ensure_ascii=False, default=repr) + "\n", encoding="utf-8")
        self._done = self._read()

    def _read(self) -> dict[int, ChunkRecord]:
        done: dict[int, ChunkRecord] = {}
        if not self.path.exists():
            return done
        text = self.path.read_text(encoding="utf-8")
        if text and not text.endswith("\n"):  # end a cut line, so the next record starts a line of its own
            with self.path.open("a", encoding="utf-8") as f:
                f.write("\n")
        for line in text.split("\n"):  # not splitlines: outputs may hold U+2028 and the like
            try:
                record = ChunkRecord.from_json(line)
            except (ValueError, KeyError, TypeError):
                continue  # a line cut short when a run was killed: its chunk runs again
            done[record.start] = record
        return done

    def get(self, start: int, size: int) -> ChunkRecord | None:
        """The finished chunk starting at `start` with `size` sentences, if any."""
        record = self._done.get(start)
        return record if record is not None and len(record.outputs) == size else None

    def append(self, record: ChunkRecord) -> None:
        """Record a finished chunk, on disk before this returns."""
        with self.path.open("a", encoding="utf-8") as f:
            f.write(record.to_json() + "\n")
            f.flush()
            os.fsync(f.fileno())
        self._done[record.start] = record
