"""Connection limits of a real `hymt serve` (silent, slow-header, slow-body and idle connections,
oversized headers, the connection cap), then its SIGTERM drain. The drain test ends the server,
so it comes last."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import threading
import time

import httpx
import pytest
from conftest import _command, _wait_ready, free_port

HEADER_TIMEOUT = 1.5
BODY_TIMEOUT = 1.5
KEEP_ALIVE = 1.0
MAX_CONNECTIONS = 8
SHUTDOWN_TIMEOUT = 4.0
# 4000 tokens take the tiny CPU model 6 s or more: longer than the shutdown timeout. 100 take
# under half a second on an idle machine, and well under the timeout on a busy one.
SLOW = {"text": "Keep talking.", "src": "en", "tgt": "de", "use_cache": False,
        "sampling": {"max_tokens": 4000, "ignore_eos": True}}
MEDIUM = {**SLOW, "sampling": {"max_tokens": 100, "ignore_eos": True}}


@pytest.fixture(scope="module")
def server(tiny_model_dir, server_starter, tmp_path_factory):
    args = ("--header-timeout", str(HEADER_TIMEOUT), "--body-timeout", str(BODY_TIMEOUT),
            "--keep-alive-timeout", str(KEEP_ALIVE), "--max-connections", str(MAX_CONNECTIONS),
            "--shutdown-timeout", str(SHUTDOWN_TIMEOUT), "--max-tokens", "4000", "--max-header-bytes", "8192")
    with server_starter(tiny_model_dir, tmp_path_factory.mktemp("connections"), *args) as started:
        yield started


def _connect(server) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=10)


def _until_closed(sock: socket.socket) -> tuple[float, bytes]:
    """Seconds until the server closes `sock`, and what it sent before."""
    started, received = time.monotonic(), b""
    while chunk := sock.recv(65536):
        received += chunk
    return time.monotonic() - started, received


def test_a_silent_connection_is_closed(server):
    with _connect(server) as sock:
        took, _ = _until_closed(sock)
    assert HEADER_TIMEOUT - 0.3 < took < HEADER_TIMEOUT + 2.5


def test_slow_headers_are_cut(server):
    with _connect(server) as sock:
        sock.sendall(b"POST /api/translate HTTP/1.1\r\nHost: x\r\n")
        started = time.monotonic()
        with pytest.raises(OSError):  # the server closes while the client still trickles bytes
            for _ in range(40):
                sock.sendall(b"X")
                time.sleep(0.25)
        took = time.monotonic() - started
    assert took < HEADER_TIMEOUT + 2.5


def test_oversized_headers_get_431(server):
    with _connect(server) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 20_000)
        _, received = _until_closed(sock)
    assert received.startswith(b"HTTP/1.1 431")


def test_a_slow_body_gets_408(server):
    with _connect(server) as sock:
        sock.sendall(b"POST /api/translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 100\r\n\r\n{\"text\": ")
        took, received = _until_closed(sock)
    head, body = received.split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 408") and json.loads(body)["error"]["field"] == "body"
    assert BODY_TIMEOUT - 0.3 < took < BODY_TIMEOUT + 2.5


def test_an_idle_keep_alive_connection_is_closed(server):
    with _connect(server) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        took, received = _until_closed(sock)
    assert received.startswith(b"HTTP/1.1 200") and took < KEEP_ALIVE + 2.5


def test_connections_are_capped(server):
    idle = [_connect(server) for _ in range(MAX_CONNECTIONS)]
    try:
        over = httpx.get(f"{server.url}/health", timeout=5)
        assert over.status_code == 503
    finally:
        for sock in idle:
            sock.close()
    time.sleep(0.2)
    assert httpx.get(f"{server.url}/health", timeout=5).status_code == 200


def test_sigterm_drains_then_exits_0(server):
    results: dict[str, tuple] = {}

    def stream() -> None:
        with httpx.stream("POST", f"{server.url}/api/translate/stream", json=SLOW, timeout=60) as r:
            results["stream"] = (r.status_code, r.read().decode(), time.monotonic())

    def medium() -> None:
        r = httpx.post(f"{server.url}/api/translate", json=MEDIUM, timeout=60)
        results["medium"] = (r.status_code, r.json(), time.monotonic())

    threads = [threading.Thread(target=stream), threading.Thread(target=medium)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 30
    while server.status()["queue_requests"] < 2:
        assert time.monotonic() < deadline, "both requests run"
        time.sleep(0.02)
    server.proc.send_signal(signal.SIGTERM)
    signalled = time.monotonic()
    refused = None
    while time.monotonic() - signalled < 3 and refused is None:  # the drain starts within a loop turn
        r = httpx.post(f"{server.url}/api/translate", json={"text": "Hi", "src": "en", "tgt": "de"}, timeout=10)
        if r.status_code == 503:
            refused = r
        time.sleep(0.05)
    assert refused is not None and refused.json()["error"]["type"] == "shutting_down"
    assert int(refused.headers["retry-after"]) >= 1
    ready = httpx.get(f"{server.url}/ready", timeout=10)
    assert ready.status_code == 503 and ready.json()["status"] == "draining"
    for thread in threads:
        thread.join(SHUTDOWN_TIMEOUT + 20)
    status, body, ended = results["medium"]
    assert status == 200 and ended > signalled, body  # it ran on through the drain
    status, text, ended = results["stream"]
    last = text.strip().split("\n\n")[-1]
    assert status == 200 and "event: delta" in text and last.startswith("event: error"), last
    assert json.loads(last.split("data: ", 1)[1])["error"]["type"] == "shutting_down"
    assert SHUTDOWN_TIMEOUT - 0.5 < ended - signalled < SHUTDOWN_TIMEOUT + 3, "cut at --shutdown-timeout"
    assert server.proc.wait(timeout=15) == 0
    assert "shutting down: 2 requests running" in server.log_text()


def test_ctrl_c_in_a_terminal_drains_too(tiny_model_dir, tmp_path):
    """A terminal's Ctrl-C reaches the server and its engine child (one process group): the
    child leaves shutdown to the server, so the drain ends the stream, not a dead engine."""
    port = free_port()
    log = tmp_path / "ctrl-c.log"
    with log.open("w") as out:
        proc = subprocess.Popen([*_command(), "serve", "--model", str(tiny_model_dir), "--port", str(port),
                                 "--max-tokens", "20000", "--shutdown-timeout", "2"], stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True,
                                env={**os.environ, "HYMT_CACHE_DIR": str(tmp_path / "cache")})
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(url, proc, log)
        results: list = []

        def stream() -> None:
            # 20,000 tokens: half a minute, far past the cut however fast the machine
            endless = {**SLOW, "sampling": {"max_tokens": 20000, "ignore_eos": True}}
            with httpx.stream("POST", f"{url}/api/translate/stream", json=endless, timeout=60) as r:
                results.append(r.read().decode())

        thread = threading.Thread(target=stream)
        thread.start()
        deadline = time.monotonic() + 30
        while httpx.get(f"{url}/api/status").json()["queue_requests"] < 1:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        time.sleep(0.3)
        os.killpg(proc.pid, signal.SIGINT)
        thread.join(30)
        last = results[0].strip().split("\n\n")[-1]
        assert json.loads(last.split("data: ", 1)[1]).get("error", {}).get("type") == "shutting_down", \
            (last[:300], log.read_text()[-2000:])
        assert proc.wait(timeout=20) == 0
        assert "engine process died" not in log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)
