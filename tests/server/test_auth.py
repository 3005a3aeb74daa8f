"""API keys on the `limits_server`: every accepted style, each protocol's refusal, open routes."""
from __future__ import annotations

import deepl
import httpx
import openai
import pytest
from libretranslatepy import LibreTranslateAPI

from hymt.server.auth import key_matches

KEY = "key-two"
NATIVE = {"text": "Hello", "tgt": "de"}


@pytest.mark.parametrize(("how", "request_kw"), [
    ("bearer", {"headers": {"Authorization": f"Bearer {KEY}"}}),
    ("deepl", {"headers": {"Authorization": f"DeepL-Auth-Key {KEY}"}}),
    ("x-api-key", {"headers": {"X-API-Key": KEY}}),
    ("token", {"params": {"token": KEY}}),
    ("env key", {"headers": {"Authorization": "Bearer key-from-env"}}),
])
def test_accepted_key_styles(limits_server, how, request_kw):
    r = httpx.post(f"{limits_server.url}/api/translate", json=NATIVE, timeout=30, **request_kw)
    assert r.status_code == 200, (how, r.text)


def test_missing_and_wrong_keys_per_protocol(limits_server):
    url = limits_server.url
    missing = httpx.post(f"{url}/api/translate", json=NATIVE)
    assert missing.status_code == 401 and missing.json()["error"]["type"] == "missing_key"
    wrong = httpx.post(f"{url}/api/translate", json=NATIVE, headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401 and wrong.json()["error"]["type"] == "invalid_key"
    libre_missing = httpx.post(f"{url}/translate", data={"q": "hi", "source": "en", "target": "de"})
    assert libre_missing.status_code == 400 and "API key" in libre_missing.json()["error"]
    libre_wrong = httpx.post(f"{url}/translate", data={"q": "hi", "source": "en", "target": "de", "api_key": "x"})
    assert libre_wrong.status_code == 403
    deeplx = httpx.post(f"{url}/translate", json={"text": "hi", "source_lang": "EN", "target_lang": "DE"})
    assert deeplx.status_code == 401 and deeplx.json()["code"] == 401


def test_clients_with_keys(limits_server):
    url = limits_server.url
    assert isinstance(LibreTranslateAPI(url, api_key=KEY).translate("Hello", "en", "de"), str)
    with pytest.raises(Exception) as info:
        LibreTranslateAPI(url, api_key="wrong").translate("Hello", "en", "de")
    assert getattr(info.value, "code", None) == 403
    with openai.OpenAI(base_url=f"{url}/v1", api_key=KEY, max_retries=0) as good:
        assert good.models.list().data[0].id
    with openai.OpenAI(base_url=f"{url}/v1", api_key="wrong", max_retries=0) as bad:
        with pytest.raises(openai.AuthenticationError) as err:
            bad.models.list()
        assert err.value.body["code"] == "invalid_api_key"
    ok = deepl.Translator(KEY, server_url=url)
    assert ok.get_usage().character.valid
    with pytest.raises(deepl.AuthorizationException):
        deepl.Translator("wrong", server_url=url).get_usage()


def test_open_routes_need_no_key_and_details_do(limits_server):
    url, headers = limits_server.url, limits_server.headers
    for path in ("/health", "/ready", "/", "/api/status", "/api/languages"):
        assert httpx.get(f"{url}{path}").status_code == 200, path
    # Without a key: readiness and status as one word; the details, and /metrics, need a key.
    assert httpx.get(f"{url}/ready").json() == {"status": "ready", "ready": True}
    assert httpx.get(f"{url}/api/status").json() == {"status": "ready", "ready": True, "key_required": True}
    assert httpx.get(f"{url}/metrics").status_code == 401
    detailed = httpx.get(f"{url}/api/status", headers=headers).json()
    assert detailed["model"] and detailed["engine_pid"] and "queue_depth" in detailed
    assert httpx.get(f"{url}/ready", headers=headers).json()["engine"] == "native"
    assert "hymt_model_ready 1.0" in httpx.get(f"{url}/metrics", headers=headers).text


def test_key_matches_compares_every_key():
    assert key_matches("b", ("a", "b", "c")) and not key_matches("d", ("a", "b"))
    assert not key_matches("", ("a",))
