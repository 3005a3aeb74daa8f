"""Real `hymt serve` processes on 127.0.0.1 over a tiny random checkpoint.

Fixtures other server tests (the web UI's too) may reuse:

- `tiny_model_dir` (session): a tiny HY-MT1.5-1.8B checkpoint directory (Path).
- `hymt_server` (session): a `ServerProcess` started from the installed `hymt` console
  script with the native engine, no API key, default limits, `--max-tokens 8` (answers of
  requests without their own sampling stay short: random weights rarely stop on their own)
  and its own translation cache directory. Attributes: `url` ("http://127.0.0.1:PORT"), `port`, `model_dir`, `proc`,
  `command`, `log_path`, `early` (what /ready and /api/translate answered right after
  /health first answered: status codes and Retry-After, to check readiness gating);
  helpers `status()`, `wait_idle()`, `log_text()`.
- `limits_server` (session): a second server with `--max-queue 2 --request-timeout 6
  --max-tokens 4000`, API
  keys `LIMIT_KEYS` (two by `--api-key`, one by env HYMT_API_KEYS); its `headers` carry a key.
- `server_starter` (session): `start_server(model_dir, tmp_dir, *extra_args, headers=None,
  env=None)`, a context manager yielding a ServerProcess, for a test's own server.

Random weights translate into gibberish: tests assert shapes, status codes, languages and
token counts, never translation quality.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

READY_TIMEOUT_S = 180.0
MAX_TOKENS = 8
SLOW_MAX_TOKENS = 4000
LIMIT_KEYS = ("key-one", "key-two", "key-from-env")
LIMIT_TIMEOUT_S = 6  # the 429 checks must finish inside it on a loaded 2-core machine


@dataclass
class ServerProcess:
    url: str
    port: int
    model_dir: Path
    proc: subprocess.Popen
    command: list[str]
    log_path: Path
    early: dict = field(default_factory=dict)
    headers: dict = field(default_factory=dict)

    def status(self) -> dict:
        return httpx.get(f"{self.url}/api/status", headers=self.headers, timeout=10).json()

    def ready_code(self) -> int:
        """The status code /ready answers now."""
        return httpx.get(f"{self.url}/ready", timeout=10).status_code

    def wait_idle(self, timeout: float = 20.0) -> dict:
        """Poll /api/status until nothing runs, waits or is admitted; returns the last status."""
        deadline = time.monotonic() + timeout
        status = self.status()
        while time.monotonic() < deadline:
            if status["running"] == 0 and status["waiting"] == 0 and status["queue_depth"] == 0:
                return status
            time.sleep(0.1)
            status = self.status()
        return status

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")


def seconds_until(predicate, timeout: float, poll: float = 0.1) -> float:
    """Poll `predicate` until it holds; how long that took. Fails the test after `timeout` s."""
    started = time.monotonic()
    while not predicate():
        assert time.monotonic() - started < timeout, f"not within {timeout} s"
        time.sleep(poll)
    return time.monotonic() - started


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _command() -> list[str]:
    script = shutil.which("hymt")
    return [script] if script else [sys.executable, "-m", "hymt"]


def _probe_early(url: str, proc: subprocess.Popen, log: Path) -> dict:
    """Wait for /health, then record what the not-yet-ready server answers."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"hymt serve exited with {proc.returncode}:\n{log.read_text()[-4000:]}")
        try:
            health = httpx.get(f"{url}/health", timeout=2)
        except httpx.TransportError:
            time.sleep(0.1)
            continue
        ready = httpx.get(f"{url}/ready", timeout=60)
        translate = httpx.post(f"{url}/api/translate", json={"text": "Hi", "tgt": "de"}, timeout=60)
        return {"health": health.status_code, "health_body": health.json(), "ready": ready.status_code,
                "translate": translate.status_code, "translate_retry_after": translate.headers.get("retry-after"),
                "translate_body": translate.json()}
    raise RuntimeError(f"hymt serve never answered /health:\n{log.read_text()[-4000:]}")


def _wait_ready(url: str, proc: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"hymt serve exited with {proc.returncode}:\n{log.read_text()[-4000:]}")
        try:
            if httpx.get(f"{url}/ready", timeout=60).status_code == 200:
                return
        except httpx.TransportError:  # the socket is not open yet
            pass
        time.sleep(0.2)
    raise RuntimeError(f"hymt serve not ready after {READY_TIMEOUT_S:.0f} s:\n{log.read_text()[-4000:]}")


@contextlib.contextmanager
def start_server(model_dir: Path, tmp_dir: Path, *extra: str, headers: dict | None = None, env: dict | None = None):
    """Run `hymt serve --model model_dir --port <free> *extra` until the block ends."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [*_command(), "serve", "--model", str(model_dir), "--port", str(port), *extra]
    log = tmp_dir / f"server-{port}.log"
    env = {**os.environ, "HYMT_CACHE_DIR": str(tmp_dir / f"cache-{port}"), **(env or {})}
    with log.open("w") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        early = _probe_early(url, proc, log) if not headers else {}
        _wait_ready(url, proc, log)
        yield ServerProcess(url, port, model_dir, proc, command, log, early, dict(headers or {}))
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


@pytest.fixture(scope="session", autouse=True)
def private_cache_dir(tmp_path_factory):
    """In-process apps keep their cache, glossaries and jobs in a folder of the test run's own,
    never in the user's cache directory."""
    previous = os.environ.get("HYMT_CACHE_DIR")
    os.environ["HYMT_CACHE_DIR"] = str(tmp_path_factory.mktemp("hymt-cache"))
    yield
    if previous is None:
        os.environ.pop("HYMT_CACHE_DIR", None)
    else:
        os.environ["HYMT_CACHE_DIR"] = previous


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> Path:
    from hymt.testing import write_tiny_checkpoint

    return write_tiny_checkpoint(tmp_path_factory.mktemp("server-model") / "HY-MT1.5-1.8B", "HY-MT1.5-1.8B")


@pytest.fixture(scope="session")
def hymt_server(tiny_model_dir, tmp_path_factory):
    directory = tmp_path_factory.mktemp("hymt-server")
    with start_server(tiny_model_dir, directory, "--max-tokens", str(MAX_TOKENS)) as server:
        yield server


@pytest.fixture(scope="session")
def server_starter():
    """`start_server` for tests that need a server of their own."""
    return start_server


@pytest.fixture(scope="session")
def limits_server(tiny_model_dir, tmp_path_factory):
    # Its cap leaves room for the slow requests the limit tests send (--max-tokens binds every request).
    args = ("--max-queue", "2", "--request-timeout", str(LIMIT_TIMEOUT_S), "--max-tokens", str(SLOW_MAX_TOKENS),
            "--api-key", LIMIT_KEYS[0], "--api-key", LIMIT_KEYS[1])
    with start_server(tiny_model_dir, tmp_path_factory.mktemp("limits-server"), *args,
                      headers={"Authorization": f"Bearer {LIMIT_KEYS[0]}"},
                      env={"HYMT_API_KEYS": LIMIT_KEYS[2]}) as server:
        yield server


@pytest.fixture(scope="session")
def client(hymt_server):
    """An httpx client on the session server."""
    with httpx.Client(base_url=hymt_server.url, timeout=60) as c:
        yield c
