"""The operator's --max-tokens bounds every protocol's answers, the OpenAI routes' included
(the session server runs with --max-tokens 8)."""
from __future__ import annotations

import json

from conftest import MAX_TOKENS

ASK = {"max_tokens": 200, "ignore_eos": True}


def test_chat_and_completions_answers_are_capped(client):
    chat = client.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": "Tell me a story."}],
                                                     "model": "m", **ASK})
    assert chat.status_code == 200 and 1 <= chat.json()["usage"]["completion_tokens"] <= MAX_TOKENS
    rewritten = client.post("/v1/chat/completions", json={
        "messages": [{"role": "user", "content": "Translate the following text into German:\n\nGood morning."}],
        "model": "m", **ASK})
    assert rewritten.headers["x-hymt-prompt-guard"] == "rewritten"
    assert rewritten.json()["usage"]["completion_tokens"] <= MAX_TOKENS
    completion = client.post("/v1/completions", json={"prompt": "Once upon a time", "model": "m", **ASK})
    assert completion.status_code == 200 and completion.json()["usage"]["completion_tokens"] <= MAX_TOKENS


def test_streamed_chat_is_capped(client):
    body = {"messages": [{"role": "user", "content": "Tell me a story."}], "model": "m", "stream": True,
            "stream_options": {"include_usage": True}, **ASK}
    with client.stream("POST", "/v1/chat/completions", json=body) as r:
        events = [line[6:] for line in r.iter_lines() if line.startswith("data: ")]
    usage = json.loads(events[-2])["usage"]
    assert events[-1] == "[DONE]" and usage["completion_tokens"] <= MAX_TOKENS


def test_native_sampling_is_capped(client):
    r = client.post("/api/translate", json={"text": "Hello.", "src": "en", "tgt": "de", "use_cache": False,
                                            "sampling": ASK})
    assert r.status_code == 200 and r.json()["usage"]["completion_tokens"] <= MAX_TOKENS
