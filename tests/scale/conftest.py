"""Fixtures of the scale tests: a tiny checkpoint, and `hymt serve --replicas` processes.

Ray tests start a local Ray cluster (tens of seconds on 2 cores): they are few, marked `ray`
and `slow`, and skipped, with the reason, only when Ray is not installed.
"""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil
import pytest

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 240.0
STOP_TIMEOUT_S = 90.0


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> Path:
    from hymt.testing import write_tiny_checkpoint

    return write_tiny_checkpoint(tmp_path_factory.mktemp("scale-model") / "tiny", family="HY-MT1.5-1.8B")


def hymt_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a `python -m hymt` child: this checkout first on PYTHONPATH."""
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, "RAY_USAGE_STATS_ENABLED": "0", **(extra or {})}


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class ReplicaServer:
    """A running `hymt serve --replicas N` (its own process group)."""

    url: str
    proc: subprocess.Popen
    log_path: Path
    state_dir: Path

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")

    def engine_processes(self) -> list[psutil.Process]:
        """The engine child process of every replica (children of Ray's replica actors)."""
        engines = []
        for proc in psutil.Process(self.proc.pid).children(recursive=True):
            with contextlib.suppress(psutil.Error):
                if "ServeReplica" in " ".join(proc.cmdline()):  # (its other child: the resource tracker)
                    engines += [c for c in proc.children() if "spawn_main" in " ".join(c.cmdline())]
        return engines


@contextlib.contextmanager
def replica_server(model_dir: Path, tmp_dir: Path, *extra: str) -> Iterator[ReplicaServer]:
    """`hymt serve --model model_dir --device cpu --port <free> *extra` until the block ends;
    SIGTERM then, and whatever of its process tree is left is killed by pid."""
    port = free_port()
    log_path = tmp_dir / f"serve-{port}.log"
    command = [sys.executable, "-m", "hymt", "serve", "--model", str(model_dir), "--device", "cpu",
               "--port", str(port), "--state-dir", str(tmp_dir / "state"), *extra]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=hymt_env(),
                                start_new_session=True)
    server = ReplicaServer(f"http://127.0.0.1:{port}", proc, log_path, tmp_dir / "state")
    tree: list[psutil.Process] = []
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while "ready on" not in server.log_text():
            if proc.poll() is not None:
                raise RuntimeError(f"hymt serve --replicas exited with {proc.returncode}:\n{server.log_text()[-4000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"replicas not ready after {START_TIMEOUT_S:.0f} s:\n{server.log_text()[-4000:]}")
            time.sleep(0.5)
        yield server
    finally:
        with contextlib.suppress(psutil.Error):
            tree = psutil.Process(proc.pid).children(recursive=True)
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        for child in tree:  # Ray's processes of this cluster only, by pid
            with contextlib.suppress(psutil.Error):
                child.kill()


def wait_http_ok(url: str, timeout: float = 60.0) -> httpx.Response:
    deadline = time.monotonic() + timeout
    while True:
        response = httpx.get(url, timeout=30)
        if response.status_code == 200 or time.monotonic() > deadline:
            return response
        time.sleep(0.5)
