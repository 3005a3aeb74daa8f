"""`hymt serve --replicas 2` on a local Ray cluster, over a tiny checkpoint on CPU: every
protocol behind the one endpoint, both replicas serving, the shared translation cache, and a
replica whose engine dies replaced while the other serves (its requests answered 503 with
Retry-After)."""
from __future__ import annotations

import json
import threading
import time
import uuid

import httpx
import psutil
import pytest

from hymt.scale.replica_guard import REPLICA_HEADER
from hymt.server.router_metrics import ROUTER_GAUGES
from tests.scale.conftest import replica_server

pytest.importorskip("ray.serve", reason='Ray is not installed (pip install "hymt[ray]")')
pytestmark = [pytest.mark.ray, pytest.mark.slow]

LONG_TOKENS = 3000  # a request that runs for seconds on the tiny model


@pytest.fixture(scope="module")
def replicas(tiny_model_dir, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("replicas")
    with replica_server(tiny_model_dir, tmp, "--replicas", "2", "--max-tokens", str(LONG_TOKENS),
                        "--health-check-period", "1") as server:
        yield server


def _post(server, path: str, **kw) -> httpx.Response:
    return httpx.post(server.url + path, timeout=60, **kw)


def _sse_events(response: httpx.Response) -> list[str]:
    return [line[len("data: "):] for line in response.text.splitlines() if line.startswith("data: ")]


def test_every_protocol_answers_behind_one_endpoint(replicas):
    url = replicas.url
    native = _post(replicas, "/api/translate", json={"text": "Hello world.", "src": "en", "tgt": "de"})
    assert native.status_code == 200 and native.json()["tgt"] == "de"
    stream = _post(replicas, "/api/translate/stream", json={"text": "Hello world.", "src": "en", "tgt": "fr"})
    assert stream.status_code == 200 and "event: done" in stream.text
    assert httpx.post(url + "/api/detect", json={"text": "Bonjour tout le monde"}, timeout=60).status_code == 200
    chat = _post(replicas, "/v1/chat/completions", json={
        "model": "tiny", "max_tokens": 8,
        "messages": [{"role": "user", "content": "Translate the following segment into German, without "
                                                 "additional explanation.\n\nGood morning."}]})
    assert chat.status_code == 200 and chat.json()["object"] == "chat.completion"
    chat_stream = _post(replicas, "/v1/chat/completions", json={
        "model": "tiny", "max_tokens": 8, "stream": True, "messages": [{"role": "user", "content": "Hi"}]})
    assert chat_stream.status_code == 200 and _sse_events(chat_stream)[-1] == "[DONE]"
    completion = _post(replicas, "/v1/completions", json={"prompt": [1, 2, 3], "max_tokens": 4,
                                                          "return_token_ids": True})
    assert completion.status_code == 200 and len(completion.json()["choices"][0]["token_ids"]) == 4
    assert httpx.get(url + "/v1/models", timeout=30).json()["data"][0]["id"] == "tiny"
    libre = _post(replicas, "/translate", json={"q": "Hello", "source": "en", "target": "de"})
    assert libre.status_code == 200 and "translatedText" in libre.json()
    prefixed = _post(replicas, "/libretranslate/translate", json={"q": "Hi", "source": "en", "target": "es"})
    assert prefixed.status_code == 200
    deepl = _post(replicas, "/v2/translate", json={"text": ["Hello"], "target_lang": "DE"})
    assert deepl.status_code == 200 and len(deepl.json()["translations"]) == 1
    deeplx = _post(replicas, "/deeplx/translate", json={"text": "Hallo", "source_lang": "de", "target_lang": "en"})
    assert deeplx.status_code == 200 and deeplx.json()["code"] == 200
    imme = _post(replicas, "/imme", json={"source_lang": "en", "target_lang": "zh-CN", "text_list": ["Hi", "Bye"]})
    assert imme.status_code == 200 and len(imme.json()["translations"]) == 2
    page = httpx.get(url + "/", timeout=30)
    assert page.status_code == 200 and "<html" in page.text.lower()
    ready = httpx.get(url + "/ready", timeout=30)
    assert ready.status_code == 200 and ready.json()["ready"] is True
    metrics = httpx.get(url + "/metrics", timeout=30).text
    assert all(f"\n{name} " in metrics for name in ROUTER_GAUGES)


def test_both_replicas_serve_and_read_the_shared_translation_cache(replicas, tiny_model_dir):
    """A translation cached by another process (here an in-process Translator over a scripted
    engine, writing the replicas' shared SQLite file) is what both replicas answer."""
    from hymt.testing import ScriptedEngine
    from hymt.translate import Translator
    from hymt.translate.cache import default_cache_path

    text = f"Good morning, shared cache {uuid.uuid4().hex[:6]}."
    writer = Translator(str(tiny_model_dir), cache=replicas.state_dir / default_cache_path().name,
                        engine=ScriptedEngine(_checkpoint(tiny_model_dir), lambda user, params: "Guten Morgen!"))
    with writer:
        assert writer.translate(text, to="de", source="en").text == "Guten Morgen!"
    answers = _until_both_replicas(lambda: _post(replicas, "/api/translate",
                                                 json={"text": text, "src": "en", "tgt": "de"}))
    assert {a.status_code for a in answers} == {200}
    assert len({a.headers[REPLICA_HEADER] for a in answers}) == 2
    assert {(a.json()["translation"], a.json()["cached"]) for a in answers} == {("Guten Morgen!", True)}


def _checkpoint(model_dir):
    from hymt.checkpoint import load_checkpoint

    return load_checkpoint(model_dir)


def test_glossaries_are_shared_across_replicas(replicas):
    pytest.importorskip("hymt.server.glossary_store", reason="DeepL glossaries are kept in memory in this tree")
    created = _post(replicas, "/v2/glossaries", json={"name": "shared", "source_lang": "en", "target_lang": "de",
                                                      "entries": "cat\tKatze", "entries_format": "tsv"})
    assert created.status_code in (200, 201), created.text
    glossary_id = created.json()["glossary_id"]
    answers = _until_both_replicas(lambda: httpx.get(f"{replicas.url}/v2/glossaries/{glossary_id}", timeout=30))
    assert {a.status_code for a in answers} == {200}
    assert len({a.headers[REPLICA_HEADER] for a in answers}) == 2


def test_a_replica_whose_engine_dies_is_replaced_while_the_other_serves(replicas):
    before = _replica_ids(replicas)
    assert len(before) == 2
    long_answers: list[httpx.Response] = []

    def long_request() -> None:
        long_answers.append(_post(replicas, "/v1/completions", json={
            "prompt": [5, 6, 7], "max_tokens": LONG_TOKENS, "ignore_eos": True}))

    threads = [threading.Thread(target=long_request) for _ in range(4)]
    for thread in threads:
        thread.start()
    time.sleep(2.0)  # the long requests are generating on both replicas
    victim = _busiest(replicas.engine_processes())
    victim.kill()
    answers: list[httpx.Response] = []
    replaced = False
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not replaced:
        answers.append(_post(replicas, "/api/translate", json={"text": "Still there?", "src": "en", "tgt": "de"}))
        seen = {a.headers.get(REPLICA_HEADER) for a in answers[-6:] if a.status_code == 200}
        replaced = len(seen - before) >= 1 and len(seen) == 2
        time.sleep(0.2)
    for thread in threads:
        thread.join(120)

    assert replaced, f"no new replica within 120 s:\n{replicas.log_text()[-3000:]}"
    # the survivor kept answering while the dead replica was replaced
    assert any(a.status_code == 200 and a.headers[REPLICA_HEADER] in before for a in answers)
    for answer in answers + long_answers:
        assert answer.status_code in (200, 503), answer.text
        if answer.status_code == 503:
            assert answer.headers["retry-after"] and json.loads(answer.text)["error"]["type"]
    assert 503 in {a.status_code for a in long_answers}, "no in-flight request was on the dead replica"
    assert 200 in {a.status_code for a in long_answers}


def _until_both_replicas(request, limit: int = 40) -> list[httpx.Response]:
    """Answers of `request()` until both replicas have answered (the router picks between two
    idle replicas at random), at most `limit`."""
    answers = [request()]
    while len({a.headers.get(REPLICA_HEADER) for a in answers}) < 2 and len(answers) < limit:
        answers.append(request())
    return answers


def _replica_ids(server) -> set[str]:
    answers = _until_both_replicas(lambda: _post(server, "/api/detect", json={"text": "Hallo Welt"}))
    return {a.headers[REPLICA_HEADER] for a in answers}


def _busiest(engines: list[psutil.Process]) -> psutil.Process:
    """The engine process using the most CPU now (one with requests in flight)."""
    assert len(engines) == 2, engines
    for proc in engines:
        proc.cpu_percent(None)
    time.sleep(0.5)
    return max(engines, key=lambda proc: proc.cpu_percent(None))
