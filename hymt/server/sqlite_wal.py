"""The server's SQLite stores (glossaries, document jobs): one connection per process in WAL
mode, shared by threads, with explicit transactions.

WAL lets readers in other processes (the replicas of one host) go on while one process
writes; `synchronous=NORMAL` in WAL mode survives a process crash, losing at most the last
transactions to a power cut. Autocommit mode (`isolation_level=None`) leaves every
transaction to `immediate`, so none is opened behind the code's back.
"""
from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: How long a statement waits for another process's write lock before failing.
BUSY_TIMEOUT_S = 30.0


def open_wal(path: Path) -> sqlite3.Connection:
    """A connection to the database at `path` (created if missing), usable from any thread."""
    conn = sqlite3.connect(str(path), check_same_thread=False, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


@contextmanager
def immediate(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction, taken before anything is read: other processes wait for it and
    never interleave. Rolled back if the block raises."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
