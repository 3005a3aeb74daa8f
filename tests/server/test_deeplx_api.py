"""DeepLX shape (/deeplx/translate, /v1/translate, root /translate by sniffing)."""
from __future__ import annotations

import pytest


@pytest.mark.parametrize("path", ["/deeplx/translate", "/v1/translate", "/translate"])
def test_deeplx_translate(client, path):
    r = client.post(path, json={"text": "Hello world", "source_lang": "auto", "target_lang": "ZH"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["code"] == 200 and isinstance(body["data"], str) and body["alternatives"] == []
    assert body["target_lang"] == "ZH" and body["source_lang"].isupper() and isinstance(body["id"], int)


def test_given_source_is_echoed(client):
    body = client.post("/deeplx/translate", json={"text": "Hallo", "source_lang": "de", "target_lang": "en-us"}).json()
    assert body["source_lang"] == "DE" and body["target_lang"] == "EN-US"


@pytest.mark.parametrize(("payload", "word"), [
    ({"source_lang": "EN", "target_lang": "DE"}, "text"),
    ({"text": "Hi", "source_lang": "EN", "target_lang": "SV"}, "target_lang"),
    ({"text": 3, "target_lang": "DE"}, "text"),
])
def test_errors_use_code_message_shape(client, payload, word):
    r = client.post("/deeplx/translate", json=payload)
    assert r.status_code == 400
    body = r.json()
    assert body["code"] == 400 and word in body["message"]
