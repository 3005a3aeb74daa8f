"""The translation cache: SQLite (WAL), one row per translated segment.

Only deterministic (greedy) answers that passed the quality guard are stored, so a hit is
exactly what the model would say again. The key hashes everything that shapes the answer:
model, family, languages, template and its options, sampling and the NFC-normalised text
(docs/reference/protocols.md §9.5).
"""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from hymt.errors import InvalidInputError

#: The environment variable naming the directory of hymt's SQLite stores (cache, glossaries, jobs).
CACHE_DIR_ENV = "HYMT_CACHE_DIR"


def default_cache_path() -> Path:
    """$HYMT_CACHE_DIR, else $XDG_CACHE_HOME/hymt, else ~/.cache/hymt; file translations.sqlite3."""
    base = os.environ.get(CACHE_DIR_ENV)
    if base:
        root = Path(base)
    else:
        root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hymt"
    return root / "translations.sqlite3"


@dataclass(frozen=True)
class CacheKey:
    """What determines one segment's answer. `options` holds the template's inputs
    (glossary entries applied, context, style, format) as JSON-ready data."""

    model: str
    family: str
    source: str | None
    target: str
    template: str
    options: tuple
    sampling: str
    text: str

    def digest(self) -> str:
        payload = json.dumps(
            [self.model, self.family, self.source, self.target, self.template, self.options,
             self.sampling, unicodedata.normalize("NFC", self.text)],
            ensure_ascii=False,
        )
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class TranslationCache:
    """A thread-safe SQLite key-value store of segment translations."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30.0)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS translations ("
                " key TEXT PRIMARY KEY, text TEXT NOT NULL, created REAL NOT NULL)"
            )
            self._conn.commit()
        except (OSError, sqlite3.Error) as exc:
            raise InvalidInputError(f"cannot open the translation cache at {self.path}: {exc}", field="cache") from exc
        self._lock = threading.Lock()

    def get_many(self, keys: list[CacheKey]) -> dict[str, str]:
        """Cached texts by digest, for the keys that are present."""
        digests = list(dict.fromkeys(k.digest() for k in keys))
        found: dict[str, str] = {}
        with self._lock:
            for i in range(0, len(digests), 500):  # SQLite's bound-parameter limit
                chunk = digests[i : i + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._conn.execute(f"SELECT key, text FROM translations WHERE key IN ({marks})", chunk)
                found.update(rows.fetchall())
        return found

    def get(self, key: CacheKey) -> str | None:
        return self.get_many([key]).get(key.digest())

    def put_many(self, items: list[tuple[CacheKey, str]]) -> None:
        if not items:
            return
        now = time.time()
        rows = [(k.digest(), text, now) for k, text in items]
        with self._lock:
            self._conn.executemany("INSERT OR REPLACE INTO translations (key, text, created) VALUES (?, ?, ?)", rows)
            self._conn.commit()

    def put(self, key: CacheKey, text: str) -> None:
        self.put_many([(key, text)])

    def __len__(self) -> int:
        with self._lock:
            return self._conn.execute("SELECT COUNT(*) FROM translations").fetchone()[0]

    def clear(self) -> None:
        with self._lock:
            self._conn.execute("DELETE FROM translations")
            self._conn.commit()

    def close(self) -> None:
        with self._lock:
            self._conn.close()
