"""Bodies bounded before they are read, parsed or authenticated; glossaries bounded; the event
loop responsive while a large glossary is planned. Against the session's real servers."""
from __future__ import annotations

import json
import socket
import threading
import time

import httpx
import psutil

from hymt.server.settings import ServerSettings

MAX_BODY = ServerSettings().max_body_bytes
MAX_TERMS = ServerSettings().max_glossary_terms


def _raw_request(url: str, head: str, body: bytes = b"", timeout: float = 10.0) -> tuple[int, dict, bytes]:
    """Send `head` (request line and headers, CRLF-joined, no blank line) and `body` on a
    fresh socket; (status, headers, body) of the answer, read until the server closes or
    Content-Length is met."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        sock.sendall(head.encode() + b"\r\n\r\n" + body)
        data = b""
        while b"\r\n\r\n" not in data:
            data += sock.recv(65536)
        head_bytes, rest = data.split(b"\r\n\r\n", 1)
        lines = head_bytes.decode().split("\r\n")
        headers = {k.lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
        length = int(headers.get("content-length", 0))
        while len(rest) < length:
            rest += sock.recv(65536)
        return int(lines[0].split()[1]), headers, rest


def test_declared_oversize_body_is_refused_unread(hymt_server):
    port = hymt_server.port
    head = (f"POST /api/translate HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {200 * 1024 * 1024}")
    started = time.monotonic()
    status, headers, body = _raw_request(hymt_server.url, head)  # not one byte of the 200 MB is sent
    assert status == 413 and time.monotonic() - started < 2.0
    error = json.loads(body)["error"]
    assert error["type"] == "too_large" and "--max-body-bytes" in error["message"]
    assert headers["connection"] == "close"  # too large to drain: the connection goes


def test_unauthenticated_oversize_body_is_refused_before_auth(limits_server):
    port = limits_server.port
    head = (f"POST /translate HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {100 * 1024 * 1024}")
    status, _, body = _raw_request(limits_server.url, head)
    # LibreTranslate's shape (its clients expect 400 for size problems), and not the 400/401 of a missing key.
    assert status == 400 and "--max-body-bytes" in json.loads(body)["error"]


def test_chunked_oversize_body_stops_at_the_limit(hymt_server):
    server = psutil.Process(hymt_server.proc.pid)
    rss_before = server.memory_info().rss
    sent = 0
    chunk = b"x" * 65536

    def body():
        nonlocal sent
        while sent < 64 * 1024 * 1024:
            sent += len(chunk)
            yield chunk

    try:
        r = httpx.post(f"{hymt_server.url}/api/translate", content=body(), headers={"content-type": "application/json"},
                       timeout=30)
        assert r.status_code == 413 and r.json()["error"]["field"] == "body"
    except httpx.TransportError:  # the server closed the connection while the client still sent
        pass
    grown = (server.memory_info().rss - rss_before) / 2**20
    assert sent < 64 * 1024 * 1024, "the server stopped reading long before the client's 64 MB"
    assert grown < 32, f"the server's memory grew by {grown:.0f} MB"


def test_small_oversize_body_gets_a_clean_413(hymt_server):
    payload = json.dumps({"text": "x" * (MAX_BODY + 10), "tgt": "de"})
    with httpx.Client(timeout=30) as client:
        r = client.post(f"{hymt_server.url}/api/translate", content=payload,
                        headers={"content-type": "application/json"})
        assert r.status_code == 413 and "--max-body-bytes" in r.json()["error"]["message"]
        # The rest of the body was read and dropped: the same connection serves the next request.
        assert client.get(f"{hymt_server.url}/health").status_code == 200


def test_glossary_caps(hymt_server):
    too_many = {f"term{i}": f"Begriff{i}" for i in range(MAX_TERMS + 1)}
    r = httpx.post(f"{hymt_server.url}/api/translate", json={"text": "term1", "tgt": "de", "glossary": too_many},
                   timeout=30)
    assert r.status_code == 413 and r.json()["error"]["field"] == "glossary"
    assert "--max-glossary-terms" in r.json()["error"]["message"]
    big = {"a" * 600_000: "b", "c" * 600_000: "d"}
    r = httpx.post(f"{hymt_server.url}/api/translate", json={"text": "a", "tgt": "de", "glossary": big}, timeout=30)
    assert r.status_code == 413 and "--max-glossary-bytes" in r.json()["error"]["message"]
    deepl = httpx.post(f"{hymt_server.url}/v2/translate", timeout=30,
                       json={"text": ["term1"], "target_lang": "DE", "glossary": too_many})
    assert deepl.status_code == 413 and "--max-glossary-terms" in deepl.json()["message"]


def test_event_loop_stays_responsive_during_a_large_glossary(hymt_server):
    glossary = {f"term{i} word{i}": f"Begriff{i}" for i in range(MAX_TERMS)}
    text = " ".join(f"We saw term{i} word{i} today." for i in range(0, 1800, 3))  # 600 sentences, ~17,000 characters
    latencies: list[float] = []
    done = threading.Event()
    outcome: list[int] = []

    def big_request() -> None:
        r = httpx.post(f"{hymt_server.url}/api/translate", timeout=120,
                       json={"text": text, "src": "en", "tgt": "de", "glossary": glossary, "use_cache": False})
        outcome.append(r.status_code)
        done.set()

    thread = threading.Thread(target=big_request)
    with httpx.Client(timeout=10) as client:
        client.get(f"{hymt_server.url}/health")
        thread.start()
        while not done.is_set():
            started = time.perf_counter()
            assert client.get(f"{hymt_server.url}/health").status_code == 200
            latencies.append(time.perf_counter() - started)
            time.sleep(0.02)
    thread.join()
    assert outcome == [200] and len(latencies) >= 5
    assert max(latencies) < 0.5, f"/health took up to {max(latencies):.2f} s while the glossary was planned"
    print(f"/health during a {MAX_TERMS}-term glossary request: max {max(latencies) * 1000:.0f} ms, "
          f"{len(latencies)} probes")
