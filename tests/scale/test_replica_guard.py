"""ReplicaGuard around a create_app server over a scripted engine (no Ray): startup waits for
the model, a replica whose engine died answers 503 with Retry-After in each protocol's shape
(in-flight 5xx included), the failure is sticky, and every answer names its replica."""
from __future__ import annotations

import asyncio
import threading

import httpx
import pytest

from hymt.checkpoint import load_checkpoint
from hymt.scale.replica_guard import REPLICA_HEADER, ReplicaGuard, ReplicaStartError
from hymt.server.app import create_app
from hymt.server.settings import ServerSettings
from hymt.testing import ScriptedEngine


class Engines:
    """A factory of Translators over ScriptedEngines, and a switch for "the engine process lives"."""

    def __init__(self, model_dir):
        self.model_dir = model_dir
        self.checkpoint = load_checkpoint(model_dir)
        self.alive = True
        self.release = threading.Event()
        self.release.set()
        self.engines: list[ScriptedEngine] = []

    def __call__(self, settings):
        from hymt.translate import Translator

        self.release.wait(10)
        engine = ScriptedEngine(self.checkpoint, lambda user, params: "Hallo")
        self.engines.append(engine)
        return Translator(str(self.model_dir), engine=engine, cache=False)


@pytest.fixture
def engines(tiny_model_dir):
    return Engines(tiny_model_dir)


def _guard(engines, factory=None) -> ReplicaGuard:
    app = create_app(ServerSettings(model=str(engines.model_dir)), translator_factory=factory or engines)
    return ReplicaGuard(app, "replica-a", engine_in_child=True, load_timeout_s=20,
                        engine_alive=lambda: engines.alive)


async def _serve(guard: ReplicaGuard, calls):
    """Run the guard's lifespan (as Ray does at replica start) and `calls(client)` inside it."""
    async with guard.app.router.lifespan_context(guard.app):
        transport = httpx.ASGITransport(app=guard)
        async with httpx.AsyncClient(transport=transport, base_url="http://replica") as client:
            return await calls(client)


def test_startup_waits_for_the_model_and_answers_name_the_replica(engines):
    engines.release.clear()
    guard = _guard(engines)
    threading.Timer(0.5, engines.release.set).start()

    async def calls(client):
        assert guard.service.ready  # the lifespan returned only once the model was loaded
        answer = await client.post("/api/translate", json={"text": "Hello.", "src": "en", "tgt": "de"})
        return answer, guard.failure()

    answer, failure = asyncio.run(_serve(guard, calls))
    assert answer.status_code == 200 and answer.json()["translation"] == "Hallo"
    assert answer.headers[REPLICA_HEADER] == "replica-a"
    assert failure is None


def test_a_model_that_cannot_load_fails_the_replica_start(engines):
    def broken(settings):
        raise RuntimeError("no weights here")

    guard = _guard(engines, broken)
    with pytest.raises(ReplicaStartError, match="no weights here"):
        asyncio.run(_serve(guard, lambda client: asyncio.sleep(0)))


def test_a_dead_engine_turns_answers_into_retryable_503s(engines):
    guard = _guard(engines)

    async def calls(client):
        ok = await client.get("/api/languages")
        engines.alive = False
        # a request whose engine fails under it (500 from the app) becomes a 503
        engines.engines[-1].fail_next("the engine process died")
        in_flight = await client.post("/api/translate", json={"text": "Hello.", "src": "en", "tgt": "de"})
        engines.alive = True  # sticky: a replica that failed is never trusted again
        later = {path: await client.post(path, json=body) for path, body in (
            ("/api/translate", {"text": "Hi.", "src": "en", "tgt": "de"}),
            ("/v1/completions", {"prompt": [1, 2], "max_tokens": 2}),
            ("/v2/translate", {"text": ["Hi"], "target_lang": "DE"}),
            ("/translate", {"q": "Hi", "source": "en", "target": "de"}))}
        return ok, in_flight, later

    ok, in_flight, later = asyncio.run(_serve(guard, calls))
    assert ok.status_code == 200
    assert in_flight.status_code == 503 and in_flight.headers["retry-after"] == "1"
    assert "being replaced" in in_flight.json()["error"]["message"]
    assert guard.failure() == "the replica's engine process died"
    assert {path: r.status_code for path, r in later.items()} == dict.fromkeys(later, 503)
    assert all(r.headers["retry-after"] == "1" and r.headers[REPLICA_HEADER] == "replica-a" for r in later.values())
    assert later["/v1/completions"].json()["error"]["type"] == "server_error"  # OpenAI's shape
    assert "message" in later["/v2/translate"].json() and "error" in later["/translate"].json()


def test_an_engine_error_on_a_live_engine_stays_a_500(engines):
    guard = _guard(engines)

    async def calls(client):
        engines.engines[-1].fail_next("out of memory")
        answer = await client.post("/api/translate", json={"text": "Hello.", "src": "en", "tgt": "de"})
        return answer, guard.failure()

    answer, failure = asyncio.run(_serve(guard, calls))
    assert answer.status_code == 500 and answer.json()["error"]["type"] == "engine_error"
    assert failure is None
