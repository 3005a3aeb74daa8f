"""Serving under load on the `limits_server` (--max-queue 2, --request-timeout 6): a full queue
answers 429 with Retry-After and the server keeps serving; a disconnect cancels the engine
request at once; a request past the timeout is cancelled and answered 504."""
from __future__ import annotations

import threading
import time

import httpx
import pytest

from hymt.server.admission import Admission
from hymt.server.errors import ApiError

# ~4000 tokens on the tiny CPU model take ~17 s, far longer than the 6 s request timeout.
SLOW = {"text": "Keep talking.", "tgt": "de", "use_cache": False,
        "sampling": {"max_tokens": 4000, "ignore_eos": True}}


def _post_in_thread(server, payload, results, path="/api/translate", timeout=30.0):
    def run():
        try:
            r = httpx.post(server.url + path, json=payload, headers=server.headers, timeout=timeout)
            body = r.json() if path == "/api/translate" else r.text
            results.append((path, r.status_code, body))
        except httpx.TransportError as exc:
            results.append((path, None, repr(exc)))

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def _wait_for(predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def test_full_queue_gets_429_then_timeouts_then_serves_again(limits_server):
    server = limits_server
    assert server.wait_idle()["queue_depth"] == 0
    results: list = []
    threads = [_post_in_thread(server, SLOW, results, path) for path in ("/api/translate", "/api/translate/stream")]
    assert _wait_for(lambda: server.status()["queue_depth"] == 2), "both slow requests are admitted"
    h = server.headers
    native = httpx.post(f"{server.url}/api/translate", json={"text": "Hi", "tgt": "de"}, headers=h)
    assert native.status_code == 429 and int(native.headers["retry-after"]) >= 1
    assert native.json()["error"]["type"] == "queue_full" and "--max-queue" in native.json()["error"]["message"]
    libre = httpx.post(f"{server.url}/translate", json={"q": "Hi", "source": "en", "target": "de"}, headers=h)
    assert libre.status_code == 429 and "busy" in libre.json()["error"]
    oai = httpx.post(f"{server.url}/v1/chat/completions", headers=h,
                     json={"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    assert oai.status_code == 429 and oai.json()["error"]["type"] == "rate_limit_error"
    stream = httpx.post(f"{server.url}/api/translate/stream", json={"text": "Hi", "tgt": "de"}, headers=h)
    assert stream.status_code == 429
    for thread in threads:
        thread.join(30)
    # Both slow requests ran into --request-timeout and were cancelled: a 504, and a stream
    # (already 200) that ends with an error event.
    outcome = {path: (status, body) for path, status, body in results}
    status, body = outcome["/api/translate"]
    assert status == 504 and body["error"]["type"] == "timeout" and "--request-timeout" in body["error"]["message"]
    status, text = outcome["/api/translate/stream"]
    assert status == 200 and "event: delta" in text
    last_event = text.strip().split("\n\n")[-1]
    assert last_event.startswith("event: error") and '"type":"timeout"' in last_event
    status = server.wait_idle()
    assert status["running"] == 0 and status["queue_depth"] == 0
    ok = httpx.post(f"{server.url}/api/translate", json={"text": "Hi again", "tgt": "de"}, headers=h)
    assert ok.status_code == 200


@pytest.mark.parametrize("path", ["/api/translate", "/api/translate/stream"])
def test_disconnect_cancels_the_engine_request(limits_server, path):
    server = limits_server
    server.wait_idle()
    started = time.monotonic()
    with pytest.raises(httpx.ReadTimeout):
        with httpx.Client(timeout=httpx.Timeout(5.0, read=1.0)) as c:
            with c.stream("POST", server.url + path, json=SLOW, headers=server.headers) as r:
                for _ in r.iter_raw():
                    pass  # a stream keeps sending deltas: stop reading and drop it after 1 s
                    if time.monotonic() - started > 1.0:
                        raise httpx.ReadTimeout("client gives up")
    gone = time.monotonic()
    tokens_then = server.status()["generated_tokens_total"]
    assert _wait_for(lambda: server.status()["running"] == 0, timeout=2.0), "the engine still runs the request"
    idle = time.monotonic()
    assert idle - started < 4.0, "cancelled by the disconnect, not by the 4 s request timeout"
    assert server.wait_idle()["queue_depth"] == 0
    time.sleep(0.3)
    assert server.status()["generated_tokens_total"] - tokens_then < 30, "no tokens after the cancel"
    print(f"{path}: engine idle {idle - gone:.2f} s after the client went away")


def test_admission_counts_slots():
    admission = Admission(limit=1, retry_after_s=3)
    with admission.slot():
        with pytest.raises(ApiError) as info:
            admission.acquire()
        assert info.value.status == 429 and info.value.headers == {"Retry-After": "3"}
    assert admission.active == 0 and admission.rejected == 1


def test_admission_counts_texts_not_requests():
    admission = Admission(limit=4, retry_after_s=2)
    admission.acquire(3)  # one batch of three texts
    with pytest.raises(ApiError) as info:
        admission.acquire(2)
    assert info.value.status == 429 and "3 texts of 1 requests" in info.value.message
    admission.acquire(1)
    assert (admission.active, admission.requests) == (4, 2)
    with pytest.raises(ApiError) as info:
        Admission(limit=4).acquire(5)
    assert info.value.status == 413 and "--max-queue" in info.value.message
    admission.close()
    with pytest.raises(ApiError) as info:
        admission.acquire(1)
    assert info.value.status == 503 and info.value.type == "shutting_down"


def test_a_batch_takes_its_texts_from_the_queue(limits_server):
    """--max-queue 2: a two-text batch fills it, a three-text batch never fits."""
    server = limits_server
    server.wait_idle()
    h = server.headers
    too_big = httpx.post(f"{server.url}/api/translate", json={"text": ["a", "b", "c"], "tgt": "de"}, headers=h)
    assert too_big.status_code == 413 and "--max-queue" in too_big.json()["error"]["message"]
    imme = httpx.post(f"{server.url}/imme", json={"text_list": ["a", "b", "c"], "target_lang": "de"}, headers=h)
    assert imme.status_code == 413 and imme.json()["code"] == 413
    results: list = []
    thread = _post_in_thread(server, {**SLOW, "text": ["Keep talking.", "And on."]}, results)
    assert _wait_for(lambda: server.status()["queue_depth"] == 2), "the batch is admitted"
    assert server.status()["queue_requests"] == 1
    busy = httpx.post(f"{server.url}/api/translate", json={"text": "Hi", "tgt": "de"}, headers=h)
    assert busy.status_code == 429 and "2 texts of 1 requests" in busy.json()["error"]["message"]
    thread.join(30)
    assert results[0][1] == 504  # the batch ran into --request-timeout
    assert server.wait_idle()["queue_depth"] == 0
