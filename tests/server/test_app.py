"""create_app in-process with Translators over a scripted stand-in engine: readiness gating,
engine faults, CORS, the UI placeholder, per-app metrics. The real-server tests cover the
protocols themselves."""
from __future__ import annotations

import gc
import threading

import pytest
from fastapi.testclient import TestClient

from hymt.engine.interface import EngineStats
from hymt.errors import ModelLoadError
from hymt.gc_tuning import TUNED_THRESHOLD
from hymt.server import app as app_module
from hymt.server.app import create_app
from hymt.server.settings import ServerSettings
from hymt.testing import ScriptedEngine, source_of


def upper_source(user_turn, params):
    return source_of(user_turn).upper()


@pytest.fixture
def echo(tiny_model_dir):
    """echo() -> a factory of Translators over a ScriptedEngine that upper-cases the source;
    `echo.engines` holds the engines made, to fail the next request or read the prompts."""
    from hymt.checkpoint import load_checkpoint
    from hymt.translate import Translator

    checkpoint = load_checkpoint(tiny_model_dir)

    class Factory:
        engines: list[ScriptedEngine] = []

        def __call__(self, settings):
            engine = ScriptedEngine(checkpoint, upper_source,
                                    stats=EngineStats(num_running=1, kv_blocks_total=10, kv_blocks_used=4))
            self.engines.append(engine)
            return Translator(str(tiny_model_dir), engine=engine, cache=False)

    return Factory()


def _client(factory, **settings) -> TestClient:
    app = create_app(ServerSettings(**settings), translator_factory=factory)
    return TestClient(app)


def test_ready_only_after_load_and_warm_up(echo):
    release = threading.Event()

    def slow_factory(settings):
        release.wait(10)
        return echo(settings)

    with _client(slow_factory) as c:
        assert c.get("/health").json() == {"status": "ok"}
        assert c.get("/ready").status_code == 503
        r = c.post("/api/translate", json={"text": "hi", "tgt": "de"})
        assert r.status_code == 503 and r.headers["retry-after"] == "1"
        release.set()
        c.app.state.hymt.service.wait_ready(10)
        assert c.get("/ready").status_code == 200
        assert c.post("/api/translate", json={"text": "hi", "tgt": "de"}).json()["translation"] == "HI"


def test_the_collector_leaves_the_loaded_heap_alone_while_serving(echo):
    before = gc.get_threshold()
    with _client(echo) as c:
        assert c.app.state.hymt.service.wait_ready(10)
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold()[0] >= TUNED_THRESHOLD
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == before


def test_failed_load_is_reported():
    def broken(settings):  # hymt's load errors are written for users: clients read them too
        raise ModelLoadError("no such checkpoint")

    with _client(broken) as c:
        c.app.state.hymt.service.wait_ready(10)
        ready = c.get("/ready")
        assert ready.status_code == 503 and "no such checkpoint" in ready.json()["error"]
        r = c.post("/v2/translate", json={"text": ["x"], "target_lang": "DE"})
        assert r.status_code == 503 and "no such checkpoint" in r.json()["message"]


def test_engine_fault_is_500_and_the_server_keeps_serving(echo, caplog):
    with _client(echo) as c:
        c.app.state.hymt.service.wait_ready(10)
        echo.engines[-1].fail_next("simulated CUDA fault")
        r = c.post("/api/translate", json={"text": "hi", "tgt": "de"})
        assert r.status_code == 500 and r.json()["error"]["type"] == "engine_error"
        # The client reads a fixed sentence and an error id; the log has the fault under that id.
        message = r.json()["error"]["message"]
        error_id = message.split("error id ")[1].split()[0]
        assert "simulated CUDA fault" not in message
        logged = [rec.getMessage() for rec in caplog.records if error_id in rec.getMessage()]
        assert len(logged) == 1 and "simulated CUDA fault" in logged[0]
        assert c.post("/api/translate", json={"text": "ok", "tgt": "de"}).status_code == 200


def test_cors_on_responses_and_preflights(echo):
    with _client(echo, cors_origins=("https://app.example",)) as c:
        r = c.get("/health", headers={"Origin": "https://app.example"})
        assert r.headers["access-control-allow-origin"] == "https://app.example"
        assert "Retry-After" in r.headers["access-control-expose-headers"]
        pre = c.options("/imme", headers={"Origin": "https://app.example", "Access-Control-Request-Method": "POST",
                                          "Access-Control-Request-Headers": "authorization,content-type",
                                          "Access-Control-Request-Private-Network": "true"})
        assert pre.status_code == 204
        assert pre.headers["access-control-allow-private-network"] == "true"
        assert pre.headers["access-control-allow-headers"] == "authorization,content-type"
        other = c.options("/imme", headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"})
        assert other.status_code == 403 and "access-control-allow-origin" not in other.headers
    with _client(echo) as c:  # the default allows loopback pages and browser extensions, not any website
        page = c.get("/api/languages", headers={"Origin": "http://localhost:5173"})
        assert page.headers["access-control-allow-origin"] == "http://localhost:5173"
        extension = c.get("/api/languages", headers={"Origin": "chrome-extension://abcdefghijklmnop"})
        assert extension.headers["access-control-allow-origin"] == "chrome-extension://abcdefghijklmnop"
        site = c.get("/api/languages", headers={"Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in site.headers


def test_ui_placeholder_when_static_is_missing(monkeypatch, tmp_path, echo):
    monkeypatch.setattr(app_module, "STATIC_DIR", tmp_path / "missing")
    with _client(echo) as c:
        r = c.get("/")
        assert r.status_code == 200 and "web UI is not installed" in r.text


def test_each_app_has_its_own_metrics_registry(echo):
    with _client(echo) as a, _client(echo) as b:
        a.app.state.hymt.service.wait_ready(10)
        b.app.state.hymt.service.wait_ready(10)
        a.post("/api/translate", json={"text": "hi", "tgt": "de"})
        text_a, text_b = a.get("/metrics").text, b.get("/metrics").text
        assert 'route="/api/translate",status="200"' in text_a
        assert 'route="/api/translate"' not in text_b
        assert "hymt_kv_blocks_free 6.0" in text_b


def test_settings_are_validated():
    with pytest.raises(ValueError, match="engine"):
        ServerSettings(engine="vllm")
    with pytest.raises(ValueError, match="openai-base-url"):
        ServerSettings(engine="openai")
    with pytest.raises(ValueError, match="max_queue"):
        ServerSettings(max_queue=0)
    assert ServerSettings(api_keys=(" k ", "")).api_keys == ("k",)
