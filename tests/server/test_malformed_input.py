"""Malformed input gets a 4xx in its protocol's shape on every endpoint that reads a body, before
authentication too; error bodies carry no exception classes or paths; an unexpected error is a
500 that leaves the connection usable and logs one line. In-process over a scripted engine."""
from __future__ import annotations

import json
import logging
import re
import socket
import threading
import time

import pytest
import uvicorn
from fastapi.testclient import TestClient

from hymt.server.app import create_app
from hymt.server.settings import ServerSettings
from hymt.testing import ScriptedEngine

# path -> (a valid body, the string field malformed values go into, the protocol's error shape)
ENDPOINTS = {
    "/api/translate": ({"text": "hi", "tgt": "de"}, "text", "native"),
    "/api/translate/stream": ({"text": "hi", "tgt": "de"}, "text", "native"),
    "/api/detect": ({"text": "hi"}, "text", "native"),
    "/v1/chat/completions": ({"messages": [{"role": "user", "content": "hi"}]}, "model", "openai"),
    "/v1/completions": ({"prompt": "hi"}, "prompt", "openai"),
    "/translate": ({"q": "hi", "source": "en", "target": "de"}, "q", "libretranslate"),
    "/detect": ({"q": "hi"}, "q", "libretranslate"),
    "/libretranslate/translate": ({"q": "hi", "source": "en", "target": "de"}, "q", "libretranslate"),
    "/v2/translate": ({"text": ["hi"], "target_lang": "DE"}, "target_lang", "deepl"),
    "/v2/glossaries": ({"name": "g", "source_lang": "EN", "target_lang": "DE", "entries": "a\tb"}, "name", "deepl"),
    "/deeplx/translate": ({"text": "hi", "target_lang": "DE"}, "text", "deeplx"),
    "/imme": ({"text_list": ["hi"], "target_lang": "de"}, "target_lang", "immersive"),
}
CLASS_NAME = re.compile(r"\b[A-Z][A-Za-z]*(Error|Exception)\b|Traceback")


def _check_shape(protocol: str, response) -> None:
    assert 400 <= response.status_code < 500, (response.status_code, response.text)
    body = response.json()
    keys = {"native": {"error"}, "openai": {"error"}, "libretranslate": {"error"}, "deepl": {"message"},
            "deeplx": {"code", "message"}, "immersive": {"error", "code"}}[protocol]
    assert set(body) == keys, body
    if protocol in ("native", "openai"):
        assert {"message", "type"} <= set(body["error"])
    assert not CLASS_NAME.search(response.text) and "/tmp/" not in response.text, response.text


@pytest.fixture(scope="module")
def factory(tiny_model_dir):
    from hymt.checkpoint import load_checkpoint
    from hymt.translate import Translator

    checkpoint = load_checkpoint(tiny_model_dir)
    def build(settings):
        return Translator(str(tiny_model_dir), engine=ScriptedEngine(checkpoint, lambda user, params: "ok"),
                          cache=False)

    return build


@pytest.fixture(scope="module")
def client(factory, tiny_model_dir):
    with TestClient(create_app(ServerSettings(model=str(tiny_model_dir)), translator_factory=factory)) as c:
        assert c.app.state.hymt.service.wait_ready(30)
        yield c


def _post_raw(client, path: str, raw: str, **headers):
    return client.post(path, content=raw.encode(), headers={"content-type": "application/json", **headers})


@pytest.mark.parametrize("path", list(ENDPOINTS))
def test_valid_bodies_pass(client, path):
    body, _, _ = ENDPOINTS[path]
    expected = 201 if path == "/v2/glossaries" else 200  # DeepL answers a created glossary with 201
    assert client.post(path, json=body).status_code == expected


@pytest.mark.parametrize("path", list(ENDPOINTS))
@pytest.mark.parametrize("case", ["lone surrogate", "deep nesting", "NaN", "Infinity", "huge number", "text/plain"])
def test_malformed_body_is_a_4xx_in_the_protocol_shape(client, path, case):
    body, field, protocol = ENDPOINTS[path]
    raw = json.dumps(body)
    if case == "lone surrogate":  # json.dumps escapes it: "\ud800", valid JSON text, no UTF-8 encoding
        response = _post_raw(client, path, json.dumps({**body, field: "x\ud800y"}))
    elif case == "deep nesting":
        response = _post_raw(client, path, raw[:-1] + ', "extra": ' + "[" * 100_000 + "]" * 100_000 + "}")
    elif case == "text/plain":  # what a web page can post without asking first
        response = client.post(path, content=raw.encode(), headers={"content-type": "text/plain"})
    else:
        literal = {"NaN": "NaN", "Infinity": "Infinity", "huge number": "1e400"}[case]
        response = _post_raw(client, path, raw[:-1] + f', "temperature": {literal}}}')
    _check_shape(protocol, response)


def test_non_finite_sampling_values_are_refused(client):
    native = client.post("/api/translate", json={"text": "hi", "tgt": "de", "sampling": {"temperature": "nan"}})
    assert native.status_code == 400 and native.json()["error"]["field"] == "sampling.temperature"
    for name in ("temperature", "top_p", "repetition_penalty"):
        chat = client.post("/v1/chat/completions",
                           json={"messages": [{"role": "user", "content": "hi"}], name: "inf"})
        assert chat.status_code == 400 and chat.json()["error"]["param"] == name, chat.text


def test_lone_surrogate_in_a_key_is_refused_before_auth(factory, tiny_model_dir):
    settings = ServerSettings(model=str(tiny_model_dir), api_keys=("k",))
    with TestClient(create_app(settings, translator_factory=factory)) as c:
        r = _post_raw(c, "/translate", json.dumps({"q": "hi", "target": "de", "api_key": "\ud800"}))
        _check_shape("libretranslate", r)
        r = c.post("/translate", content=b"q=hi&target=de&api_key=%ED%B3%BF",  # a form: bytes that decode to nothing
                   headers={"content-type": "application/x-www-form-urlencoded"})
        assert r.status_code == 403, r.text


def test_form_bodies_with_undecodable_bytes(client):
    r = client.post("/translate", content=b"q=%ED%A0%80&source=en&target=de",
                    headers={"content-type": "application/x-www-form-urlencoded"})
    assert r.status_code in (200, 400), r.text


def test_detect_names_q(client):
    r = client.post("/detect", json={"q": "   "})
    assert r.status_code == 400 and r.json()["error"] == "q must not be empty"
    r = client.post("/detect", json={"q": ["a"]})
    assert r.status_code == 400 and r.json()["error"].startswith("q ")


def test_405_lists_every_method_of_the_path(client):
    r = client.put("/v2/glossaries")
    assert r.status_code == 405 and r.headers["allow"] == "GET, POST"
    r = client.get("/api/translate")
    assert r.status_code == 405 and r.headers["allow"] == "POST" and "error" in r.json()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _read_response(sock: socket.socket, buffer: bytes) -> tuple[int, bytes, bytes]:
    """(status, body, what follows) of one Content-Length response on `sock`."""
    while b"\r\n\r\n" not in buffer:
        buffer += sock.recv(65536)
    head, rest = buffer.split(b"\r\n\r\n", 1)
    length = int(re.search(rb"content-length: (\d+)", head, re.I).group(1))
    while len(rest) < length:
        rest += sock.recv(65536)
    return int(head.split()[1]), rest[:length], rest[length:]


def test_an_unexpected_error_is_one_log_line_and_the_connection_lives(tiny_model_dir, caplog):
    app = create_app(ServerSettings(model=str(tiny_model_dir)), load=False)

    @app.post("/api/boom")
    async def boom() -> None:
        raise RuntimeError(f"secret state under {tiny_model_dir}")

    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None, lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    try:
        caplog.clear()
        with caplog.at_level(logging.INFO), socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(b"POST /api/boom HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
            status, body, rest = _read_response(sock, b"")
            assert status == 500
            error = json.loads(body)["error"]
            assert error["type"] == "internal_error" and "error id" in error["message"]
            assert "secret" not in body.decode() and "RuntimeError" not in body.decode()
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")  # the same connection
            status, body, _ = _read_response(sock, rest)
            assert status == 200 and json.loads(body) == {"status": "ok"}
        errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
        assert len(errors) == 1 and "RuntimeError" in errors[0].getMessage() and errors[0].exc_info is None
        assert error["message"].split("error id ")[1].split()[0] in errors[0].getMessage()
    finally:
        server.should_exit = True
        thread.join(10)
