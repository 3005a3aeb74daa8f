"""hymt's native API (/api/...) against a real `hymt serve` process on a tiny checkpoint."""
from __future__ import annotations

import itertools
import json

import pytest
from fastapi.testclient import TestClient

from hymt.engine.interface import Engine
from hymt.engine.outputs import RequestOutput
from hymt.languages import supported_codes
from hymt.server.app import create_app
from hymt.server.settings import ServerSettings

SHORT = {"max_tokens": 6}


def test_health_answers_before_ready_and_requests_get_503(hymt_server):
    early = hymt_server.early
    assert early["health"] == 200 and early["health_body"] == {"status": "ok"}
    assert early["ready"] == 503, "the model loads after the socket opens; /ready must wait for it"
    assert early["translate"] == 503
    assert early["translate_retry_after"] is not None and int(early["translate_retry_after"]) >= 1
    assert early["translate_body"]["error"]["type"] == "not_ready"


def test_ready_reports_model_and_engine(client):
    body = client.get("/ready").json()
    assert body["status"] == "ready" and body["ready"] is True
    assert body["engine"] == "native" and body["family"] == "HY-MT1.5-1.8B"


def test_translate_one_text(client):
    r = client.post("/api/translate", json={"text": "Hello world.", "src": "en", "tgt": "de",
                                            "sampling": SHORT, "use_cache": False})
    assert r.status_code == 200, r.text
    body = r.json()
    assert isinstance(body["translation"], str)
    assert body["src"] == "en" and body["tgt"] == "de" and body["model"] == "HY-MT1.5-1.8B"
    assert body["usage"]["prompt_tokens"] > 0 and 1 <= body["usage"]["completion_tokens"]
    assert body["elapsed_ms"] > 0 and body["cached"] is False
    assert isinstance(body["issues"], list) and len(body["results"]) == 1
    assert body["results"][0]["translation"] == body["translation"]


def test_translate_batch_keeps_shape_and_order(client):
    texts = ["Good morning.", "这是一个测试。", "Bonjour tout le monde, comment allez-vous ?"]
    r = client.post("/api/translate", json={"text": texts, "tgt": "ja", "sampling": SHORT, "use_cache": False})
    assert r.status_code == 200, r.text
    body = r.json()
    assert isinstance(body["translation"], list) and len(body["translation"]) == 3
    assert [i["translation"] for i in body["results"]] == body["translation"]
    # src "auto": every item is detected on its own.
    assert body["results"][1]["src"] == "zh" and body["results"][2]["src"] == "fr"
    assert body["usage"]["completion_tokens"] == sum(i["usage"]["completion_tokens"] for i in body["results"])


def test_translate_options_glossary_context_format(client):
    r = client.post("/api/translate", json={
        "text": "<p>Open the <b>Settings</b> menu.</p>", "src": "en", "tgt": "zh", "format": "html",
        "glossary": [["Settings", "设置"]], "context": "A user manual.", "sampling": SHORT, "use_cache": False})
    assert r.status_code == 200, r.text
    assert r.json()["translation"].startswith("<p>"), "html markup is kept around translated text"


def test_stream_sends_deltas_then_done(client):
    payload = {"text": "Stream this sentence please.", "src": "en", "tgt": "de", "sampling": SHORT, "use_cache": False}
    with client.stream("POST", "/api/translate/stream", json=payload) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        events = _sse(r.iter_lines())
    names = [name for name, _ in events]
    assert names[-1] == "done" and "delta" in names and set(names) <= {"delta", "done"}
    done = events[-1][1]
    assert done["translation"] == "".join(d["text"] for n, d in events if n == "delta")
    assert done["src"] == "en" and done["tgt"] == "de"
    for key in ("prompt_tokens", "completion_tokens"):
        assert isinstance(done["usage"][key], int) and done["usage"][key] > 0, done["usage"]
    assert done["results"][0]["usage"] == done["usage"]


def test_stream_done_counts_the_tokens_of_the_request(client):
    # ignore_eos: the greedy answer is exactly 6 tokens, streamed or not; "retry": false (what
    # `hymt bench --server` sends): /api/translate asks the engine once, as the stream does.
    payload = {"text": "Count these tokens, please.", "src": "en", "tgt": "de", "use_cache": False,
               "retry": False, "sampling": {"max_tokens": 6, "ignore_eos": True}}
    with client.stream("POST", "/api/translate/stream", json=payload) as r:
        done = _sse(r.iter_lines())[-1][1]
    plain = client.post("/api/translate", json=payload).json()
    assert done["usage"]["completion_tokens"] == plain["usage"]["completion_tokens"] == 6
    assert done["retried"] is False and plain["retried"] is False
    assert plain["usage"]["prompt_tokens"] == done["usage"]["prompt_tokens"] > 0
    assert plain["translation"] == done["translation"]
    assert "length" not in plain["issues"], "ignore_eos asked for the length: not a truncation"


def test_retry_field_switches_the_second_request(client):
    # Without ignore_eos the random model's answer is cut at max_tokens: flagged "length".
    payload = {"text": "Retry this sentence, maybe.", "src": "en", "tgt": "de", "use_cache": False,
               "sampling": {"max_tokens": 6}}
    retried = client.post("/api/translate", json=payload).json()
    once = client.post("/api/translate", json={**payload, "retry": False}).json()
    assert retried["retried"] is True and once["retried"] is False
    assert "length" in once["issues"], "issues are reported even when not retried"
    assert retried["usage"]["prompt_tokens"] == 2 * once["usage"]["prompt_tokens"] > 0
    assert once["usage"]["completion_tokens"] == 6


ANSWER = "Guten Morgen, wie geht es dir heute?"


class _OneAnswerEngine(Engine):
    """Answers every prompt with ANSWER, a token per step, then ends its turn: a model whose
    answers pass the quality guard, so /api/translate does not retry."""

    def __init__(self, checkpoint) -> None:
        self.answer = checkpoint.encode(ANSWER)
        self.live: dict[str, tuple[list[int], list[int], list[int]]] = {}
        self.ids = itertools.count()

    def add_request(self, prompt_token_ids, params, request_id=None, *, final_only=False) -> str:
        request_id = request_id or f"r{next(self.ids)}"
        self.live[request_id] = (list(prompt_token_ids), self.answer[: params.max_tokens], [0])
        return request_id

    def step(self) -> list[RequestOutput]:
        outputs = []
        for request_id, (prompt, answer, sent) in list(self.live.items()):
            sent[0] += 1
            done = sent[0] >= len(answer)
            outputs.append(RequestOutput(request_id, prompt, token_ids=answer[: sent[0]],
                                         new_token_ids=answer[sent[0] - 1 : sent[0]], finished=done,
                                         finish_reason="stop" if done else None))
            if done:
                del self.live[request_id]
        return outputs

    def abort(self, request_id: str) -> None:
        self.live.pop(request_id, None)

    def has_unfinished(self) -> bool:
        return bool(self.live)


def test_stream_done_usage_equals_translate(tiny_model_dir):
    from hymt.checkpoint import load_checkpoint
    from hymt.translate import Translator

    def factory(settings):
        return Translator(str(tiny_model_dir), engine=_OneAnswerEngine(load_checkpoint(tiny_model_dir)), cache=False)

    payload = {"text": "Good morning, how are you today?\n\nFine, thank you.", "src": "en", "tgt": "de"}
    app = create_app(ServerSettings(model=str(tiny_model_dir)), translator_factory=factory)
    with TestClient(app) as c:
        assert app.state.hymt.service.wait_ready(60)
        plain = c.post("/api/translate", json=payload).json()
        with c.stream("POST", "/api/translate/stream", json=payload) as r:
            events = _sse(r.iter_lines())
    name, done = events[-1]
    assert name == "done" and plain["retried"] is False and plain["issues"] == []
    assert done["translation"] == plain["translation"] == f"{ANSWER}\n\n{ANSWER}"
    assert done["usage"] == plain["usage"]
    assert done["results"][0]["segments"] == plain["results"][0]["segments"] == 2
    for key in ("prompt_tokens", "completion_tokens"):
        assert isinstance(done["usage"][key], int) and done["usage"][key] > 0
    assert done["usage"]["completion_tokens"] == 2 * len(load_checkpoint(tiny_model_dir).encode(ANSWER))


def test_stream_rejects_a_list(client):
    r = client.post("/api/translate/stream", json={"text": ["a", "b"], "tgt": "de"})
    assert r.status_code == 400 and r.json()["error"]["field"] == "text"


def test_stream_checks_the_retry_field(client):
    r = client.post("/api/translate/stream", json={"text": "Hi there.", "tgt": "de", "retry": "maybe"})
    assert r.status_code == 422 and r.json()["error"]["field"] == "retry"


def test_detect(client):
    r = client.post("/api/detect", json={"text": "Dies ist ein deutscher Satz über das Wetter."})
    assert r.status_code == 200
    body = r.json()
    assert body["language"] == "de" and body["name"] == "German" and 0 < body["confidence"] <= 1


def test_languages_models_status(client):
    languages = client.get("/api/languages").json()
    assert [lang["code"] for lang in languages] == list(supported_codes())
    assert {"code", "name", "chinese_name", "aliases"} <= set(languages[0])
    models = client.get("/api/models").json()["models"]
    assert models[0]["id"] == "HY-MT1.5-1.8B" and models[0]["ready"] is True
    status = client.get("/api/status").json()
    for key in ("ready", "model", "family", "engine", "device", "queue_depth", "running", "waiting",
                "kv_blocks_total", "kv_blocks_used", "kv_usage", "max_chars"):
        assert key in status, key
    assert status["ready"] is True and status["kv_blocks_total"] > 0


@pytest.mark.parametrize(
    ("payload", "status", "field", "words"),
    [
        ({"text": "Hi", "tgt": "sv"}, 400, "tgt", ["sv", "zh-Hant", "yue"]),
        ({"text": "Hi", "src": "klingon", "tgt": "de"}, 400, "src", ["klingon"]),
        ({"text": "Hi"}, 400, "tgt", ["tgt"]),
        ({"tgt": "de"}, 400, "text", ["text"]),
        ({"text": "   ", "tgt": "de"}, 400, "text", ["text"]),
        ({"text": 5, "tgt": "de"}, 422, "text", ["string"]),
        ({"text": ["ok", 3], "tgt": "de"}, 422, "text[1]", ["string"]),
        ({"text": "Hi", "tgt": "de", "sampling": {"temperature": "hot"}}, 422, "sampling.temperature", ["number"]),
        ({"text": "Hi", "tgt": "de", "sampling": {"top_p": 3}}, 400, "sampling.top_p", ["top_p"]),
        ({"text": "Hi", "tgt": "de", "sampling": {"beam": 3}}, 400, "sampling.beam", ["temperature"]),
        ({"text": "Hi", "tgt": "de", "format": "pdf"}, 400, "format", ["markdown", "srt"]),
        ({"text": "Hi", "tgt": "de", "glossary": "x"}, 422, "glossary", ["glossary"]),
        ({"text": "Hi", "tgt": "de", "use_cache": "maybe"}, 422, "use_cache", ["boolean"]),
        ({"text": "Hi", "tgt": "de", "retry": "maybe"}, 422, "retry", ["boolean"]),
        ({"text": "Hi", "tgt": "de", "retry": 0}, 422, "retry", ["boolean"]),
        ({"text": "Hi", "tgt": "de", "retry": ["no"]}, 422, "retry", ["boolean"]),
        ({"text": "x" * 20001, "tgt": "de"}, 413, "text", ["20000", "--max-chars"]),
        ({"text": ["x"] * 129, "tgt": "de"}, 413, "text", ["128", "--max-batch"]),
    ],
)
def test_bad_input_names_the_field(client, payload, status, field, words):
    r = client.post("/api/translate", json=payload)
    assert r.status_code == status, r.text
    error = r.json()["error"]
    assert error["field"] == field
    for word in words:
        assert word in error["message"], (word, error["message"])
    assert "detail" not in r.json()


def test_unknown_language_lists_valid_codes(client):
    error = client.post("/api/translate", json={"text": "Hi", "tgt": "no"}).json()["error"]
    assert error["valid"] == list(supported_codes())


def test_malformed_json_and_non_object(client):
    r = client.post("/api/translate", content=b'{"text": "x",', headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["type"] == "invalid_json"
    r = client.post("/api/translate", json=["text"])
    assert r.status_code == 422 and r.json()["error"]["field"] == "body"


def test_unknown_route_and_method_use_native_shape(client):
    r = client.get("/api/nothing")
    assert r.status_code == 404 and r.json()["error"]["type"] == "not_found"
    r = client.get("/api/translate")
    assert r.status_code == 405 and "error" in r.json()


def _sse(lines) -> list[tuple[str, dict]]:
    events, name, data = [], None, []
    for line in lines:
        if line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())
        elif not line and data:
            events.append((name, json.loads("\n".join(data))))
            name, data = None, []
    if data:
        events.append((name, json.loads("\n".join(data))))
    return events

