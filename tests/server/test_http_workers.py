"""`hymt serve --http-workers 2`: two HTTP processes in front of one engine process.

One server runs the module's tests in file order: both workers answer, an engine killed
under load gives 503 then recovers, a killed worker is replaced, and SIGTERM drains to exit 0.
A second server, with --engine-restarts 0, exits 3 when its engine dies.
"""
from __future__ import annotations

import os
import re
import signal
import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from conftest import seconds_until

from hymt.bench.server_ready import wait_for_ready_workers

TEXT = {"text": "Hello world.", "src": "en", "tgt": "de"}
SLOW = {"text": "Keep talking.", "src": "en", "tgt": "de", "use_cache": False,
        "sampling": {"max_tokens": 3000, "ignore_eos": True}}
WORKER = re.compile(r'^hymt_http_worker\{pid="(\d+)",worker="(\d+)"\} 1\.0$', re.M)
RECOVER_S = 90.0


@pytest.fixture(scope="module")
def server(tiny_model_dir, server_starter, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("http-workers")
    with server_starter(tiny_model_dir, tmp, "--http-workers", "2", "--max-tokens", "4000") as started:
        wait_for_ready_workers(started.url, 2, timeout_s=60)  # /ready came from one of them
        yield started


def _workers_seen(server, scrapes: int = 30, *, resets: bool = False) -> dict[str, str]:
    """worker number -> pid of the workers that answered `scrapes` fresh connections.
    resets: a connection may be reset (queued on the socket of a worker that died)."""
    seen = {}
    for _ in range(scrapes):
        try:
            pid, worker = WORKER.search(httpx.get(f"{server.url}/metrics", timeout=10).text).groups()
        except httpx.TransportError:
            if not resets:
                raise
            continue
        seen[worker] = pid
    return seen


def test_both_workers_answer_concurrent_requests_on_one_engine(server):
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda i: httpx.post(f"{server.url}/api/translate", json={**TEXT, "text": f"Hi {i}."},
                                                     timeout=60), range(16)))
    assert all(a.status_code == 200 and a.json()["tgt"] == "de" for a in answers), [a.text for a in answers]
    seen = _workers_seen(server)
    assert set(seen) == {"1", "2"} and len(set(seen.values())) == 2
    assert str(server.proc.pid) not in seen.values()  # the parent serves nothing itself
    pids = {server.status()["engine_pid"] for _ in range(10)}
    assert len(pids) == 1 and str(pids.pop()) not in seen.values()  # one engine for both
    idle = server.wait_idle()  # every worker's view of the shared engine comes back to idle
    assert idle["running"] == 0 and idle["waiting"] == 0
    metrics = httpx.get(f"{server.url}/metrics").text
    http_cpu = float(re.search(r"^hymt_http_cpu_seconds_total (\S+)$", metrics, re.M).group(1))
    own_cpu = float(re.search(r"^process_cpu_seconds_total (\S+)$", metrics, re.M).group(1))
    assert http_cpu > own_cpu > 0  # all the HTTP processes together


def test_engine_killed_under_load_gives_503_then_recovers(server):
    results = []

    def slow() -> None:
        r = httpx.post(f"{server.url}/api/translate", json=SLOW, timeout=60)
        results.append((r.status_code, r.json(), r.headers.get("retry-after")))

    threads = [threading.Thread(target=slow) for _ in range(4)]
    for thread in threads:
        thread.start()
    seconds_until(lambda: server.status()["running"] == 4, 30)
    pid = server.status()["engine_pid"]
    os.kill(pid, signal.SIGKILL)
    for thread in threads:
        thread.join(30)
    assert len(results) == 4
    for status, body, retry_after in results:
        assert status == 503 and body["error"]["type"] == "engine_restarting" and int(retry_after) >= 1, body
    assert wait_for_ready_workers(server.url, 2, timeout_s=RECOVER_S) == {"1", "2"}  # each reconnected
    for _ in range(6):
        status = server.status()
        assert status["engine_pid"] not in (None, pid) and status["engine_restarts"] == 1
    for _ in range(4):  # both workers serve again
        assert httpx.post(f"{server.url}/api/translate", json=TEXT, timeout=60).status_code == 200


def test_a_killed_worker_is_replaced(server):
    before = _workers_seen(server)
    os.kill(int(before["1"]), signal.SIGKILL)
    seconds_until(lambda: _workers_seen(server, 10, resets=True).get("1") not in (None, before["1"]), RECOVER_S,
                  poll=0.5)
    assert _workers_seen(server)["2"] == before["2"]
    assert httpx.post(f"{server.url}/api/translate", json=TEXT, timeout=60).status_code == 200


def test_sigterm_drains_every_worker_and_exits_0(server):
    results = []

    def slow() -> None:
        body = {**SLOW, "sampling": {"max_tokens": 150, "ignore_eos": True}}
        results.append(httpx.post(f"{server.url}/api/translate", json=body, timeout=60).status_code)

    threads = [threading.Thread(target=slow) for _ in range(4)]
    for thread in threads:
        thread.start()
    seconds_until(lambda: server.status()["running"] >= 4, 30)
    server.proc.send_signal(signal.SIGTERM)
    seconds_until(lambda: server.ready_code() == 503, 5)  # draining: still listening, not ready
    for thread in threads:
        thread.join(60)
    assert results == [200] * 4  # the admitted requests ran to the end
    assert server.proc.wait(timeout=30) == 0
    assert "draining the HTTP workers" in server.log_text()


def test_the_server_exits_3_when_the_engine_cannot_be_restarted(tiny_model_dir, server_starter, tmp_path):
    with server_starter(tiny_model_dir, tmp_path, "--http-workers", "2", "--engine-restarts", "0") as started:
        wait_for_ready_workers(started.url, 2, timeout_s=60)  # /ready came from one of them
        os.kill(started.status()["engine_pid"], signal.SIGKILL)
        assert started.proc.wait(timeout=60) == 3
    log = started.log_text()
    assert "gave up after 0 failed restarts" in log and "hymt: error:" in log
