"""JobStore: document jobs in SQLite, their files on disk, and every engine answer they got.

    <directory>/jobs.sqlite3        jobs (one row each) and job_outputs (the jobs' OutputLogs)
    <directory>/files/<ID>.in       the uploaded document
    <directory>/files/<ID>.out      the translated document
    <directory>/files/<ID>.part     an upload being received

Files are named by job id only: a client's file name never reaches a path. The database is in
WAL mode, so several server processes may share one store; each write is its own short
transaction. An engine answer is committed the moment it arrives (job_outputs), so a job
interrupted by a crash loses nothing it had finished: see output_log.py. The answers are
deleted with their job.
"""
from __future__ import annotations

import array
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import astuple, fields
from pathlib import Path

from hymt.errors import InvalidInputError
from hymt.server.jobs.job import Job, JobState, is_job_id
from hymt.server.sqlite_wal import immediate, open_wal
from hymt.translate.output_log import RecordedOutput

DB_NAME = "jobs.sqlite3"
_COLUMNS = tuple(f.name for f in fields(Job))
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS jobs (id TEXT PRIMARY KEY, key TEXT NOT NULL, filename TEXT NOT NULL,"
    " format TEXT NOT NULL, source TEXT, target TEXT NOT NULL, options TEXT NOT NULL, state TEXT NOT NULL,"
    " done INTEGER NOT NULL, total INTEGER NOT NULL, chars INTEGER NOT NULL, error TEXT, created REAL NOT NULL,"
    " updated REAL NOT NULL, expires REAL NOT NULL, started REAL, result_name TEXT NOT NULL,"
    " media_type TEXT NOT NULL, owner TEXT, heartbeat REAL)",
    "CREATE INDEX IF NOT EXISTS jobs_by_state ON jobs (state, created)",
    "CREATE TABLE IF NOT EXISTS job_outputs (job_id TEXT NOT NULL, key TEXT NOT NULL, token_ids BLOB NOT NULL,"
    " finish_reason TEXT NOT NULL, PRIMARY KEY (job_id, key))",
)
#: The token id array type of job_outputs.token_ids (vocabularies stay below 2**32).
_TOKEN_TYPE = "I"


class JobStore:
    """Thread-safe access to one job directory (one connection, one lock)."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self.files = self.directory / "files"
        try:
            self.files.mkdir(parents=True, exist_ok=True)
            self._conn = open_wal(self.directory / DB_NAME)
            for statement in _SCHEMA:
                self._conn.execute(statement)
        except (OSError, sqlite3.Error) as exc:
            raise InvalidInputError(f"cannot open the job store at {self.directory}: {exc}", field="jobs_dir") from exc
        self._lock = threading.Lock()

    @classmethod
    def exists_at(cls, directory: str | Path) -> bool:
        return (Path(directory) / DB_NAME).is_file()

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One immediate transaction: other processes wait for it, never interleave."""
        with self._lock, immediate(self._conn) as conn:
            yield conn

    # -- files -------------------------------------------------------------------------------

    def upload_path(self, job_id: str) -> Path:
        return self._file(job_id, ".part")

    def input_path(self, job_id: str) -> Path:
        return self._file(job_id, ".in")

    def result_path(self, job_id: str) -> Path:
        return self._file(job_id, ".out")

    def _file(self, job_id: str, suffix: str) -> Path:
        if not is_job_id(job_id):
            raise ValueError(f"not a job id: {job_id!r}")
        return self.files / f"{job_id}{suffix}"

    # -- jobs --------------------------------------------------------------------------------

    def add(self, job: Job) -> None:
        """Store `job`, its uploaded file moving from upload_path to input_path."""
        self.upload_path(job.id).replace(self.input_path(job.id))
        row = list(astuple(job))
        row[_COLUMNS.index("options")] = json.dumps(job.options)
        row[_COLUMNS.index("state")] = str(job.state)
        try:
            with self._write() as db:
                db.execute(f"INSERT INTO jobs ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})",
                           row)
        except BaseException:
            self.input_path(job.id).unlink(missing_ok=True)
            raise

    def get(self, job_id: str) -> Job | None:
        if not is_job_id(job_id):
            return None
        with self._lock:
            row = self._conn.execute(f"SELECT {', '.join(_COLUMNS)} FROM jobs WHERE id = ?", (job_id,)).fetchone()
        return _job(row) if row else None

    def all(self) -> list[Job]:
        """Every job, newest first."""
        with self._lock:
            rows = self._conn.execute(f"SELECT {', '.join(_COLUMNS)} FROM jobs ORDER BY created DESC").fetchall()
        return [_job(row) for row in rows]

    def claim_next(self, owner: str, now: float | None = None) -> Job | None:
        """The oldest queued job, now translating under `owner`; None when none waits."""
        now = time.time() if now is None else now
        with self._write() as db:
            row = db.execute("SELECT id FROM jobs WHERE state = ? ORDER BY created LIMIT 1",
                             (str(JobState.QUEUED),)).fetchone()
            if row is None:
                return None
            db.execute("UPDATE jobs SET state = ?, owner = ?, heartbeat = ?, started = ?, updated = ? WHERE id = ?",
                       (str(JobState.TRANSLATING), owner, now, now, now, row[0]))
        return self.get(row[0])

    def heartbeat(self, job_id: str, owner: str, done: int, total: int, now: float | None = None) -> bool:
        """Progress and liveness of a running job; False when it is no longer `owner`'s
        (deleted, or given to another process)."""
        now = time.time() if now is None else now
        with self._write() as db:
            changed = db.execute("UPDATE jobs SET done = ?, total = ?, heartbeat = ?, updated = ?"
                                 " WHERE id = ? AND owner = ? AND state = ?",
                                 (done, total, now, now, job_id, owner, str(JobState.TRANSLATING))).rowcount
        return changed == 1

    def finish(self, job_id: str, owner: str, *, result_name: str, media_type: str, total: int, ttl_s: float,
               now: float | None = None) -> bool:
        """Mark a job done (its result already at result_path); False when it is not `owner`'s."""
        now = time.time() if now is None else now
        with self._write() as db:
            changed = db.execute(
                "UPDATE jobs SET state = ?, done = ?, total = ?, result_name = ?, media_type = ?, updated = ?,"
                " expires = ?, owner = NULL, heartbeat = NULL WHERE id = ? AND owner = ?",
                (str(JobState.DONE), total, total, result_name, media_type, now, now + ttl_s, job_id, owner)).rowcount
        return changed == 1

    def fail(self, job_id: str, owner: str, message: str, *, ttl_s: float, now: float | None = None) -> bool:
        now = time.time() if now is None else now
        with self._write() as db:
            changed = db.execute(
                "UPDATE jobs SET state = ?, error = ?, updated = ?, expires = ?, owner = NULL, heartbeat = NULL"
                " WHERE id = ? AND owner = ?",
                (str(JobState.ERROR), message, now, now + ttl_s, job_id, owner)).rowcount
        return changed == 1

    def requeue(self, gone: Callable[[str | None, float | None], bool], *, ttl_s: float,
                now: float | None = None) -> list[str]:
        """Put translating jobs whose owner is `gone(owner, heartbeat)` back in the queue, with
        a fresh expiry; their recorded answers stay. Returns their ids."""
        now = time.time() if now is None else now
        with self._write() as db:
            rows = db.execute("SELECT id, owner, heartbeat FROM jobs WHERE state = ?",
                              (str(JobState.TRANSLATING),)).fetchall()
            ids = [job_id for job_id, owner, beat in rows if gone(owner, beat)]
            for job_id in ids:
                db.execute("UPDATE jobs SET state = ?, owner = NULL, heartbeat = NULL, updated = ?, expires = ?"
                           " WHERE id = ?", (str(JobState.QUEUED), now, now + ttl_s, job_id))
        return ids

    def delete(self, job_id: str) -> bool:
        """Delete a job, its answers and its files; False when there was no such job."""
        if not is_job_id(job_id):
            return False
        found = self.forget(job_id)
        self.remove_files(job_id)
        return found

    def forget(self, job_id: str) -> bool:
        """Delete a job's row and answers, leaving its files (a download still reading one);
        False when there was no such job. remove_files, or the sweep of stray files, ends them."""
        if not is_job_id(job_id):
            return False
        with self._write() as db:
            found = db.execute("DELETE FROM jobs WHERE id = ?", (job_id,)).rowcount
            db.execute("DELETE FROM job_outputs WHERE job_id = ?", (job_id,))
        return found == 1

    def remove_files(self, job_id: str) -> None:
        for path in (self.upload_path(job_id), self.input_path(job_id), self.result_path(job_id)):
            path.unlink(missing_ok=True)

    def expired(self, now: float | None = None) -> list[str]:
        """Ids of jobs past their expiry, except those being translated."""
        now = time.time() if now is None else now
        with self._lock:
            rows = self._conn.execute("SELECT id FROM jobs WHERE expires < ? AND state != ?",
                                      (now, str(JobState.TRANSLATING))).fetchall()
        return [row[0] for row in rows]

    def stray_files(self, older_than: float) -> list[Path]:
        """Files of no job (an upload cut short, a job deleted by another process mid-write)
        last changed before `older_than`."""
        with self._lock:
            known = {row[0] for row in self._conn.execute("SELECT id FROM jobs")}
        stray = []
        for path in self.files.iterdir():
            if path.stem not in known and path.stat().st_mtime < older_than:
                stray.append(path)
        return stray

    # -- engine answers (the jobs' OutputLogs) -----------------------------------------------

    def outputs(self, job_id: str) -> dict[str, RecordedOutput]:
        """Every answer recorded for a job, by request key."""
        with self._lock:
            rows = self._conn.execute("SELECT key, token_ids, finish_reason FROM job_outputs WHERE job_id = ?",
                                      (job_id,)).fetchall()
        return {key: _recorded(blob, reason) for key, blob, reason in rows}

    def output_keys(self, job_id: str) -> set[str]:
        """The request keys a job has answers for."""
        with self._lock:
            rows = self._conn.execute("SELECT key FROM job_outputs WHERE job_id = ?", (job_id,)).fetchall()
        return {row[0] for row in rows}

    def output(self, job_id: str, key: str) -> RecordedOutput | None:
        """One recorded answer."""
        with self._lock:
            row = self._conn.execute("SELECT token_ids, finish_reason FROM job_outputs WHERE job_id = ? AND key = ?",
                                     (job_id, key)).fetchone()
        return _recorded(*row) if row else None

    def record_output(self, job_id: str, key: str, output: RecordedOutput) -> None:
        blob = array.array(_TOKEN_TYPE, output.token_ids).tobytes()
        with self._write() as db:
            db.execute("INSERT OR REPLACE INTO job_outputs (job_id, key, token_ids, finish_reason) VALUES (?, ?, ?, ?)",
                       (job_id, key, blob, output.finish_reason))


def _recorded(blob: bytes, finish_reason: str) -> RecordedOutput:
    return RecordedOutput.parse(tuple(array.array(_TOKEN_TYPE, blob)), finish_reason)


def _job(row: tuple) -> Job:
    values = dict(zip(_COLUMNS, row))
    values["options"] = json.loads(values["options"])
    values["state"] = JobState(values["state"])
    return Job(**values)
