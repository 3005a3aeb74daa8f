"""/v1/completions (vLLM shape) with the `openai` package, and one `hymt serve --engine openai`
whose engine is the session server (hymt's own remote backend end to end)."""
from __future__ import annotations

import httpx
import openai
import pytest


def test_completion_from_text_and_token_ids(hymt_server):
    with openai.OpenAI(base_url=f"{hymt_server.url}/v1", api_key="x", max_retries=0) as oai:
        text = oai.completions.create(model="any", prompt="Once upon a time", max_tokens=5)
        assert text.object == "text_completion" and isinstance(text.choices[0].text, str)
        assert 1 <= text.usage.completion_tokens <= 5 and text.usage.prompt_tokens > 0
        ids = oai.completions.create(model="any", prompt=[1, 2, 3, 4], max_tokens=4,
                                     extra_body={"return_token_ids": True, "ignore_eos": True})
        assert ids.usage.prompt_tokens == 4 and ids.usage.completion_tokens == 4
        assert len(ids.choices[0].model_extra["token_ids"]) == 4
        chunks = list(oai.completions.create(model="any", prompt="Hello", max_tokens=3, stream=True))
        assert chunks[-1].choices[0].finish_reason in ("stop", "length")


def test_bad_prompt_is_400(client):
    r = client.post("/v1/completions", json={"prompt": [], "max_tokens": 3})
    assert r.status_code == 400 and r.json()["error"]["param"] == "prompt"


@pytest.fixture(scope="module")
def proxy_server(hymt_server, tiny_model_dir, tmp_path_factory, server_starter):
    args = ("--engine", "openai", "--openai-base-url", hymt_server.url, "--max-tokens", "6")
    with server_starter(tiny_model_dir, tmp_path_factory.mktemp("proxy"), *args) as server:
        yield server


def test_openai_engine_backend_over_another_hymt_server(proxy_server, hymt_server):
    before = hymt_server.status()["generated_tokens_total"]
    r = httpx.post(f"{proxy_server.url}/api/translate", json={"text": "Through the proxy.", "tgt": "de"}, timeout=60)
    assert r.status_code == 200, r.text
    assert r.json()["usage"]["completion_tokens"] >= 1
    assert hymt_server.status()["generated_tokens_total"] > before, "the tokens came from the upstream server"
    assert httpx.get(f"{proxy_server.url}/ready").json()["engine"] == "openai"
