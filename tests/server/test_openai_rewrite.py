"""OpenAI chats the prompt guard rewrites: streamed token by token, usage of the answer
returned, and the model names /v1/models offers. In process, over a scripted engine."""
from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from hymt.server.app import create_app
from hymt.server.settings import ServerSettings
from hymt.testing import ScriptedEngine, source_of

GENERIC = [{"role": "user", "content": "Translate the following text into German:\n\nGood morning, friend.\n\n"
                                       "See you tomorrow evening."}]


@pytest.fixture
def scripted(tiny_model_dir):
    """(client, engine): a server whose engine answers 'Guten Tag, mein Freund.' to greedy
    requests and echoes the source otherwise."""
    from hymt.checkpoint import load_checkpoint
    from hymt.translate import Translator

    checkpoint = load_checkpoint(tiny_model_dir)
    engines = []

    def answer(user, params):
        return source_of(user) if params.greedy else "Guten Tag, mein Freund, bis morgen."

    def factory(settings):
        engines.append(ScriptedEngine(checkpoint, answer))
        return Translator(str(tiny_model_dir), engine=engines[-1], cache=False)

    with TestClient(create_app(ServerSettings(model=str(tiny_model_dir)), translator_factory=factory)) as client:
        assert client.app.state.hymt.service.wait_ready(30)
        yield client, engines[-1]


def _chunks(response) -> list[dict]:
    return [json.loads(line[6:]) for line in response.iter_lines() if line.startswith("data: {")]


def test_a_rewritten_chat_streams_token_by_token(scripted):
    client, engine = scripted
    with client.stream("POST", "/v1/chat/completions", json={"model": "x", "messages": GENERIC,
                                                              "stream": True, "temperature": 0.5}) as r:
        assert r.headers["x-hymt-prompt-guard"] == "rewritten"
        chunks = _chunks(r)
    contents = [c["choices"][0]["delta"].get("content") for c in chunks if c["choices"]]
    pieces = [c for c in contents if c]
    text = "".join(pieces)
    assert text == "Guten Tag, mein Freund, bis morgen.\n\nGuten Tag, mein Freund, bis morgen."
    assert len(pieces) > 4  # token pieces, not one piece per paragraph


def test_usage_counts_the_answer_returned_not_the_retry(scripted):
    client, engine = scripted
    # greedy answers echo the source: the guard retries with sampling, and keeps the retry
    r = client.post("/v1/chat/completions", json={"model": "x", "messages": GENERIC, "max_tokens": 20})
    body = r.json()
    assert body["choices"][0]["message"]["content"].startswith("Guten Tag")
    asked = [p for p in engine.prompts if "Good morning" in p[0] or "See you" in p[0]]  # not the warm-up
    greedy = [p for p in asked if p[1].greedy]
    assert len(greedy) == 2 and len(asked) == 4  # every paragraph was retried once
    answer = len(engine.checkpoint.encode_text("Guten Tag, mein Freund, bis morgen."))
    assert answer > 20  # so max_tokens cuts each kept answer at 20
    assert body["usage"]["completion_tokens"] == 2 * 20  # not 2 * (first 20 + retry 20)


def test_models_lists_aliases_and_any_name_is_accepted(scripted):
    client, _ = scripted
    ids = [m["id"] for m in client.get("/v1/models").json()["data"]]
    assert ids[0] == client.app.state.hymt.settings.model_id
    assert "HY-MT1.5-1.8B" in ids and "tencent/HY-MT1.5-1.8B" in ids
    r = client.post("/v1/chat/completions", json={"model": "gpt-4o-mini", "messages": GENERIC})
    assert r.status_code == 200 and r.json()["model"] == ids[0]
