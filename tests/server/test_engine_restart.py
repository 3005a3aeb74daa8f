"""A real `hymt serve` whose engine child is killed with SIGKILL: idle, under load, and for good.

The engine's pid comes from /api/status. The tests run in file order on one server: the last
one breaks the checkpoint, so that no restart can succeed, and the server must exit 3.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import threading
import time

import httpx
import pytest
from conftest import seconds_until

# ~3000 tokens on the tiny CPU model: far longer than the tests wait.
SLOW = {"text": "Keep talking.", "src": "en", "tgt": "de", "use_cache": False,
        "sampling": {"max_tokens": 3000, "ignore_eos": True}}
NOTICE_S = 2.0  # the engine's death shows on /ready within this
RECOVER_S = 90.0  # a new engine process is loaded and warm within this (a loaded 2-core machine)


@pytest.fixture(scope="module")
def server(tiny_model_dir, server_starter, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("engine-restart")
    model_dir = tmp / "HY-MT1.5-1.8B"
    shutil.copytree(tiny_model_dir, model_dir)
    with server_starter(model_dir, tmp, "--max-tokens", "4000", "--engine-restarts", "3") as started:
        yield started


def _engine_pid(server) -> int:
    pid = server.status()["engine_pid"]
    assert isinstance(pid, int) and pid != server.proc.pid
    return pid


def _recovers(server, old_pid: int) -> None:
    took = seconds_until(lambda: server.ready_code() == 200, RECOVER_S, poll=0.2)
    status = server.status()
    assert status["engine_pid"] not in (None, old_pid) and status["engine_restarts"] >= 1
    r = httpx.post(f"{server.url}/api/translate", json={"text": "Hello again.", "src": "en", "tgt": "de"}, timeout=60)
    assert r.status_code == 200, r.text
    print(f"serving again {took:.1f} s after /ready turned 503")


def test_killed_while_idle(server):
    pid = _engine_pid(server)
    os.kill(pid, signal.SIGKILL)
    killed = time.monotonic()
    seconds_until(lambda: server.ready_code() == 503, NOTICE_S, poll=0.05)
    print(f"/ready 503 {time.monotonic() - killed:.2f} s after the kill")
    ready = httpx.get(f"{server.url}/ready").json()
    assert ready["status"] == "restarting" and "engine process died" in ready["error"]
    status = server.status()
    assert status["status"] == "restarting" and status["running"] == 0 and status["queue_depth"] == 0
    _recovers(server, pid)
    metrics = httpx.get(f"{server.url}/metrics").text
    assert "hymt_engine_restarts_total 1.0" in metrics and "hymt_engine_deaths_total 1.0" in metrics


def test_killed_under_load(server):
    results: dict[str, tuple] = {}

    def plain(i: int) -> None:
        r = httpx.post(f"{server.url}/api/translate", json=SLOW, timeout=60)
        results[f"plain{i}"] = (r.status_code, r.json(), r.headers.get("retry-after"))

    def stream() -> None:
        with httpx.stream("POST", f"{server.url}/api/translate/stream", json=SLOW, timeout=60) as r:
            results["stream"] = (r.status_code, r.read().decode())

    threads = [threading.Thread(target=plain, args=(i,)) for i in range(3)] + [threading.Thread(target=stream)]
    for thread in threads:
        thread.start()
    seconds_until(lambda: server.status()["running"] == 4, 30, poll=0.1)
    pid = _engine_pid(server)
    os.kill(pid, signal.SIGKILL)
    killed = time.monotonic()
    for thread in threads:
        thread.join(30)
    ended = time.monotonic() - killed
    assert ended < NOTICE_S, f"in-flight requests took {ended:.1f} s to end"
    for i in range(3):
        status, body, retry_after = results[f"plain{i}"]
        assert status == 503 and body["error"]["type"] == "engine_restarting" and int(retry_after) >= 1, body
    status, text = results["stream"]
    last = text.strip().split("\n\n")[-1]
    assert status == 200 and "event: delta" in text and last.startswith("event: error")
    assert json.loads(last.split("data: ", 1)[1])["error"]["type"] == "engine_restarting"
    _recovers(server, pid)


def test_gives_up_when_the_engine_cannot_be_rebuilt(server):
    (server.model_dir / "config.json").write_text("{ not json")
    pid = _engine_pid(server)
    os.kill(pid, signal.SIGKILL)
    server.proc.wait(timeout=RECOVER_S)
    assert server.proc.returncode == 3
    log = server.log_text()
    assert re.search(r"engine restart \d failed: .*config.json is not valid JSON", log)
    assert "gave up after" in log and "hymt: error:" in log
