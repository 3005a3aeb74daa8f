"""Which server process translates a job, and whether that process is still there.

Several `hymt serve` processes may share one job store (SQLite in WAL mode). A process that
starts translating a job writes its owner token and then a heartbeat every few seconds. A
job whose owner is gone goes back to the queue: at once when the owner ran on this host and
its process no longer exists (a crash or a kill, then a restart), else when its heartbeat is
older than STALE_AFTER_S (another host, or a hung process).
"""
from __future__ import annotations

import os
import secrets
import socket

#: Seconds between a running job's heartbeats (its progress is written with them).
HEARTBEAT_S = 1.0
#: A heartbeat older than this marks its owner as gone, wherever it ran.
STALE_AFTER_S = 30.0


def owner_token() -> str:
    """This process's token: host, pid, and a nonce (a restarted server may get the same pid)."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


def owner_gone(token: str | None, heartbeat: float | None, now: float, me: str) -> bool:
    """True when the process behind `token` no longer translates its job."""
    if token is None or heartbeat is None:
        return True
    if token == me:
        return False
    if now - heartbeat > STALE_AFTER_S:
        return True
    parts = token.rsplit(":", 2)
    if len(parts) != 3 or parts[0] != socket.gethostname() or not parts[1].isdigit():
        return False  # another host: only its heartbeat tells
    pid = int(parts[1])
    if pid == os.getpid():
        return True  # our pid with another nonce: the earlier process that had it is gone
    return not _process_exists(pid)


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        return True
    return True
