"""The server's glossaries: one SQLite file that every server process on the host may share.

A glossary has a name and dictionaries, one per (source, target) language pair, each a list
of term pairs (DeepL's v3 model; a v2 glossary is a glossary with one dictionary). The DeepL
routes (/v2/glossaries, /v3/glossaries) and /v2/translate's `glossary_id` read and write it.

Sharing: the file is in WAL mode, so readers never wait for a writer; every write is one
`BEGIN IMMEDIATE` transaction that checks the limits and writes, so two processes cannot
both slip under a limit. Inside a process one connection serves every thread, behind a lock.

Bounds (`GlossaryLimits`, ServerSettings.glossaries): glossaries held, bytes and entries per
glossary, bytes and entries in all, and UTF-8 bytes per term and name. A write that would
pass one is refused whole (`GlossaryLimitError`, `scope` says whether the glossary or the
store is full).
"""
from __future__ import annotations

import sqlite3
import threading
import uuid
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from hymt.errors import InvalidInputError
from hymt.server.glossary_entries import Entries, entries_tsv, merge_entries
from hymt.server.sqlite_wal import immediate, open_wal
from hymt.translate.cache import default_cache_path

#: The store's file name, in the translation cache's directory unless configured.
GLOSSARY_FILE = "glossaries.sqlite3"
_SCHEMA_VERSION = 1
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS glossaries ("
    " glossary_id TEXT PRIMARY KEY, name TEXT NOT NULL, creation_time TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS dictionaries ("
    " glossary_id TEXT NOT NULL REFERENCES glossaries(glossary_id) ON DELETE CASCADE,"
    " source_lang TEXT NOT NULL, target_lang TEXT NOT NULL, entries TEXT NOT NULL,"
    " entry_count INTEGER NOT NULL, bytes INTEGER NOT NULL, creation_time TEXT NOT NULL,"
    " PRIMARY KEY (glossary_id, source_lang, target_lang))",
)


@dataclass(frozen=True)
class GlossaryLimits:
    """How much the store holds. DeepL's own limits are the defaults where it has them.

    Attributes:
        max_glossaries: glossaries held at once (DeepL: 1000 per account).
        max_glossary_bytes: UTF-8 bytes of one glossary's entries, all dictionaries (DeepL: 10 MiB).
        max_glossary_entries: entries of one glossary, all dictionaries.
        max_total_bytes: UTF-8 bytes of every glossary's entries together.
        max_total_entries: entries of every glossary together.
        max_term_bytes: UTF-8 bytes of one term, and of a glossary's name (DeepL: 1024).
    """

    max_glossaries: int = 1000
    max_glossary_bytes: int = 10 * 1024 * 1024
    max_glossary_entries: int = 100_000
    max_total_bytes: int = 256 * 1024 * 1024
    max_total_entries: int = 1_000_000
    max_term_bytes: int = 1024

    def __post_init__(self) -> None:
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise InvalidInputError(f"glossary limit {name} must be an integer >= 1, got {value!r}", field=name)


@dataclass(frozen=True)
class GlossarySettings:
    """Where the glossaries live and how much they may hold.

    Attributes:
        path: the SQLite file; None: `glossaries.sqlite3` beside the translation cache
            ($HYMT_CACHE_DIR, else $XDG_CACHE_HOME/hymt, else ~/.cache/hymt).
        limits: the store's bounds.
    """

    path: Path | None = None
    limits: GlossaryLimits = field(default_factory=GlossaryLimits)

    @property
    def file(self) -> Path:
        return self.path if self.path is not None else default_cache_path().parent / GLOSSARY_FILE


@dataclass(frozen=True)
class Dictionary:
    """Entries for one language pair (codes as the protocol layer normalised them)."""

    source_lang: str
    target_lang: str
    entries: Entries


@dataclass(frozen=True)
class DictionaryInfo:
    source_lang: str
    target_lang: str
    entry_count: int
    creation_time: str


@dataclass(frozen=True)
class GlossaryInfo:
    """A glossary without its entries."""

    glossary_id: str
    name: str
    creation_time: str
    dictionaries: tuple[DictionaryInfo, ...]


class GlossaryNotFoundError(InvalidInputError):
    def __init__(self, glossary_id: str) -> None:
        super().__init__(f"Glossary not found: no glossary {glossary_id!r}", field="glossary_id")


class DictionaryNotFoundError(InvalidInputError):
    def __init__(self, glossary: GlossaryInfo, source_lang: str, target_lang: str) -> None:
        pairs = ", ".join(f"{d.source_lang}-{d.target_lang}" for d in glossary.dictionaries) or "none"
        super().__init__(f"No dictionary found for language pair {source_lang}-{target_lang} in glossary "
                         f"{glossary.glossary_id!r} (its pairs: {pairs})", field="glossary_id")
        self.glossary = glossary


class GlossaryLimitError(InvalidInputError):
    """A write over a limit. `scope` is "glossary" (the request is too large) or "store"
    (the server holds too much already)."""

    def __init__(self, message: str, *, scope: str, field: str) -> None:
        super().__init__(message, field=field)
        self.scope = scope


def _check_pairs(dictionaries: Sequence[Dictionary]) -> None:
    pairs = [(d.source_lang, d.target_lang) for d in dictionaries]
    repeated = sorted({f"{s}-{t}" for s, t in pairs if pairs.count((s, t)) > 1})
    if repeated:
        raise InvalidInputError(f"dictionaries names the language pair {', '.join(repeated)} more than once",
                                field="dictionaries")


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


class GlossaryStore:
    """Glossaries in one SQLite file (see the module doc). Every method is thread-safe."""

    def __init__(self, settings: GlossarySettings | None = None) -> None:
        settings = settings or GlossarySettings()
        self.path = settings.file
        self.limits = settings.limits
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = open_wal(self.path)
            self._conn.execute("PRAGMA foreign_keys=ON")
            with self._write():
                for statement in _SCHEMA:
                    self._conn.execute(statement)
                self._conn.execute(f"PRAGMA user_version={_SCHEMA_VERSION}")
        except (OSError, sqlite3.Error) as exc:
            raise InvalidInputError(f"cannot open the glossary store at {self.path}: {exc}",
                                    field="glossaries") from exc

    def _write(self) -> AbstractContextManager[sqlite3.Connection]:
        """One write transaction, taken before reading what it checks (other processes wait)."""
        return immediate(self._conn)

    @contextmanager
    def _read(self) -> Iterator[None]:
        """One read transaction: its queries see one snapshot, whatever other processes write."""
        self._conn.execute("BEGIN")
        try:
            yield
        finally:
            self._conn.execute("COMMIT")

    # -- reads -------------------------------------------------------------------------------
    def list(self) -> list[GlossaryInfo]:
        with self._lock, self._read():
            rows = self._conn.execute("SELECT glossary_id FROM glossaries ORDER BY rowid")
            return [self._info(glossary_id) for (glossary_id,) in rows.fetchall()]

    def get(self, glossary_id: str) -> GlossaryInfo:
        with self._lock, self._read():
            return self._info(glossary_id)

    def entries(self, glossary_id: str, source_lang: str, target_lang: str) -> Entries:
        """The entries of one dictionary; GlossaryNotFoundError / DictionaryNotFoundError."""
        with self._lock, self._read():
            info = self._info(glossary_id)
            return self._entries(info, source_lang, target_lang)

    def _info(self, glossary_id: str) -> GlossaryInfo:
        row = self._conn.execute("SELECT name, creation_time FROM glossaries WHERE glossary_id = ?",
                                 (glossary_id,)).fetchone()
        if row is None:
            raise GlossaryNotFoundError(glossary_id)
        dictionaries = self._conn.execute(
            "SELECT source_lang, target_lang, entry_count, creation_time FROM dictionaries WHERE glossary_id = ? "
            "ORDER BY rowid", (glossary_id,)).fetchall()
        return GlossaryInfo(glossary_id, row[0], row[1], tuple(DictionaryInfo(*d) for d in dictionaries))

    def _entries(self, info: GlossaryInfo, source_lang: str, target_lang: str) -> Entries:
        row = self._conn.execute(
            "SELECT entries FROM dictionaries WHERE glossary_id = ? AND source_lang = ? AND target_lang = ?",
            (info.glossary_id, source_lang, target_lang)).fetchone()
        if row is None:
            raise DictionaryNotFoundError(info, source_lang, target_lang)
        return tuple((source, target) for source, _, target in (line.partition("\t") for line in row[0].split("\n")))

    # -- writes ------------------------------------------------------------------------------
    def create(self, name: str, dictionaries: Sequence[Dictionary]) -> GlossaryInfo:
        """A new glossary holding `dictionaries` (one per language pair)."""
        self._check_name(name)
        _check_pairs(dictionaries)
        glossary_id = str(uuid.uuid4())
        with self._lock, self._write() as conn:
            count = conn.execute("SELECT COUNT(*) FROM glossaries").fetchone()[0]
            if count >= self.limits.max_glossaries:
                raise GlossaryLimitError(f"the server holds {count} glossaries, the most it keeps; delete some first",
                                         scope="store", field="glossaries")
            self._check_sizes(conn, None, dictionaries)
            conn.execute("INSERT INTO glossaries (glossary_id, name, creation_time) VALUES (?, ?, ?)",
                         (glossary_id, name, _now()))
            for dictionary in dictionaries:
                self._put(conn, glossary_id, dictionary)
            return self._info(glossary_id)

    def update(self, glossary_id: str, name: str | None, dictionaries: Sequence[Dictionary]) -> GlossaryInfo:
        """Rename the glossary (unless `name` is None) and add each dictionary's entries to
        the glossary's dictionary of that pair (created if absent; a known source term takes
        the new target), all or nothing."""
        if name is not None:
            self._check_name(name)
        _check_pairs(dictionaries)
        with self._lock, self._write() as conn:
            info = self._info(glossary_id)
            merged = []
            for dictionary in dictionaries:
                try:
                    old = self._entries(info, dictionary.source_lang, dictionary.target_lang)
                except DictionaryNotFoundError:
                    old = ()
                merged.append(Dictionary(dictionary.source_lang, dictionary.target_lang,
                                         merge_entries(old, dictionary.entries)))
            self._check_sizes(conn, glossary_id, merged)
            for dictionary in merged:
                self._put(conn, glossary_id, dictionary)
            if name is not None:
                conn.execute("UPDATE glossaries SET name = ? WHERE glossary_id = ?", (name, glossary_id))
            return self._info(glossary_id)

    def replace_dictionary(self, glossary_id: str, dictionary: Dictionary) -> DictionaryInfo:
        """Set the glossary's dictionary of that pair to `dictionary` (created if absent)."""
        with self._lock, self._write() as conn:
            self._info(glossary_id)
            self._check_sizes(conn, glossary_id, [dictionary])
            self._put(conn, glossary_id, dictionary)
            info = self._info(glossary_id)
            return next(d for d in info.dictionaries
                        if (d.source_lang, d.target_lang) == (dictionary.source_lang, dictionary.target_lang))

    def delete(self, glossary_id: str) -> None:
        with self._lock, self._write() as conn:
            self._info(glossary_id)
            conn.execute("DELETE FROM glossaries WHERE glossary_id = ?", (glossary_id,))

    def delete_dictionary(self, glossary_id: str, source_lang: str, target_lang: str) -> None:
        with self._lock, self._write() as conn:
            info = self._info(glossary_id)
            self._entries(info, source_lang, target_lang)
            conn.execute("DELETE FROM dictionaries WHERE glossary_id = ? AND source_lang = ? AND target_lang = ?",
                         (glossary_id, source_lang, target_lang))

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def _put(self, conn: sqlite3.Connection, glossary_id: str, dictionary: Dictionary) -> None:
        tsv = entries_tsv(dictionary.entries)
        conn.execute(
            "INSERT INTO dictionaries (glossary_id, source_lang, target_lang, entries, entry_count, bytes, "
            "creation_time) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (glossary_id, source_lang, target_lang) DO "
            "UPDATE SET entries = excluded.entries, entry_count = excluded.entry_count, bytes = excluded.bytes",
            (glossary_id, dictionary.source_lang, dictionary.target_lang, tsv, len(dictionary.entries),
             len(tsv.encode("utf-8")), _now()))

    def _check_name(self, name: str) -> None:
        if not name.strip():
            raise InvalidInputError("Missing or invalid argument: name must not be empty", field="name")
        size = len(name.encode("utf-8"))
        if size > self.limits.max_term_bytes:
            raise GlossaryLimitError(f"name has {size} UTF-8 bytes; the limit is {self.limits.max_term_bytes}",
                                     scope="glossary", field="name")

    def _check_sizes(self, conn: sqlite3.Connection, glossary_id: str | None, new: Sequence[Dictionary]) -> None:
        """Refuse a write that would take the glossary or the store over a limit. `new`
        replaces the glossary's dictionaries of the same pairs."""
        replaced = {(d.source_lang, d.target_lang) for d in new}
        kept = [0, 0]  # bytes, entries of the glossary's other dictionaries
        dropped = [0, 0]  # bytes, entries of the dictionaries `new` replaces
        rows = conn.execute("SELECT source_lang, target_lang, bytes, entry_count FROM dictionaries "
                            "WHERE glossary_id = ?", (glossary_id or "",))
        for source, target, size, entries in rows:
            side = dropped if (source, target) in replaced else kept
            side[0], side[1] = side[0] + size, side[1] + entries
        new_bytes = sum(len(entries_tsv(d.entries).encode("utf-8")) for d in new)
        new_entries = sum(len(d.entries) for d in new)
        total_bytes, total_entries = conn.execute(
            "SELECT COALESCE(SUM(bytes), 0), COALESCE(SUM(entry_count), 0) FROM dictionaries").fetchone()
        limits = self.limits
        checks = (
            ("glossary", "entries", kept[1] + new_entries, limits.max_glossary_entries, "the glossary would have"),
            ("glossary", "bytes", kept[0] + new_bytes, limits.max_glossary_bytes, "the glossary's entries would take"),
            ("store", "entries", total_entries - dropped[1] + new_entries, limits.max_total_entries,
             "the server's glossaries would hold"),
            ("store", "bytes", total_bytes - dropped[0] + new_bytes, limits.max_total_bytes,
             "the server's glossaries would take"),
        )
        for scope, unit, value, limit, what in checks:
            if value > limit:
                raise GlossaryLimitError(f"{what} {value} {unit}; the limit is {limit}", scope=scope, field="entries")
