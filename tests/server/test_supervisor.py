"""The model supervisor in-process: a Translator over a scripted engine that can "die" the way
an engine process does (its pid gone, its steps failing), rebuilt through the factory.

The real engine child killed with SIGKILL is in test_engine_restart.py."""
from __future__ import annotations

import threading
import time

from fastapi.testclient import TestClient

from hymt.engine.sampling import SamplingParams
from hymt.errors import EngineError, ModelLoadError
from hymt.server.app import create_app
from hymt.server.service import ServedModel
from hymt.server.settings import ServerSettings
from hymt.testing import ScriptedEngine

LONG = "word " * 400  # ~400 tokens, one per step


class MortalEngine(ScriptedEngine):
    """A scripted engine with a pid that `kill()` takes away; its steps then fail as an
    EngineProcess's do when the child is gone. `step_s` slows every step."""

    def __init__(self, checkpoint, step_s: float = 0.0):
        super().__init__(checkpoint, lambda user, params: LONG if "slow" in user else "ok")
        self.alive = True
        self.step_s = step_s

    def kill(self) -> None:
        self.alive = False

    def pid(self) -> int | None:
        return 4242 if self.alive else None

    def add_request(self, prompt_token_ids, params: SamplingParams, request_id=None, *, final_only=False) -> str:
        if not self.alive:
            raise EngineError("the engine process died: exit code -9")
        return super().add_request(prompt_token_ids, params, request_id)

    def step(self):
        time.sleep(self.step_s)
        if not self.alive:
            raise EngineError("the engine process died: exit code -9 (EOFError())")
        return super().step()


class Factory:
    """Builds ServedModels over MortalEngines; `fail_from` makes the n-th build on raise;
    rebuilds take `rebuild_s` (a real engine takes seconds to load)."""

    def __init__(self, model_dir, step_s: float = 0.0, fail_from: int | None = None, rebuild_s: float = 0.0):
        from hymt.checkpoint import load_checkpoint

        self.model_dir, self.step_s, self.fail_from, self.rebuild_s = model_dir, step_s, fail_from, rebuild_s
        self.checkpoint = load_checkpoint(model_dir)
        self.engines: list[MortalEngine] = []
        self.builds = 0

    def __call__(self, settings) -> ServedModel:
        from hymt.translate import Translator

        self.builds += 1
        if self.builds > 1:
            time.sleep(self.rebuild_s)
        if self.fail_from is not None and self.builds >= self.fail_from:
            raise ModelLoadError(f"{self.model_dir}/config.json is not valid JSON")
        engine = MortalEngine(self.checkpoint, self.step_s)
        self.engines.append(engine)
        return ServedModel(Translator(str(self.model_dir), engine=engine, cache=False), engine_pid=engine.pid)


def _wait(predicate, timeout: float) -> float:
    """Seconds until `predicate()` held; fails after `timeout`."""
    started = time.monotonic()
    while not predicate():
        assert time.monotonic() - started < timeout, "timed out"
        time.sleep(0.02)
    return time.monotonic() - started


def _client(factory: Factory, **settings) -> TestClient:
    return TestClient(create_app(ServerSettings(model=str(factory.model_dir), **settings), translator_factory=factory))


def test_a_dead_engine_is_reported_and_replaced(tiny_model_dir):
    factory = Factory(tiny_model_dir, rebuild_s=1.0)
    with _client(factory) as c:
        assert c.app.state.hymt.service.wait_ready(20)
        assert c.post("/api/translate", json={"text": "Hi", "src": "en", "tgt": "de"}).status_code == 200
        factory.engines[-1].kill()
        _wait(lambda: c.get("/ready").status_code == 503, timeout=2.0)
        ready = c.get("/ready").json()
        assert ready["status"] == "restarting" and "engine process died" in ready["error"]
        status = c.get("/api/status").json()
        assert status["status"] == "restarting" and status["running"] == 0 and status["engine_deaths"] == 1
        refused = c.post("/api/translate", json={"text": "Hi", "src": "en", "tgt": "de"})
        assert refused.status_code == 503 and refused.json()["error"]["type"] == "engine_restarting"
        _wait(lambda: c.get("/ready").status_code == 200, timeout=20.0)
        assert factory.builds == 2
        assert c.post("/api/translate", json={"text": "Hi", "src": "en", "tgt": "de"}).status_code == 200
        metrics = c.get("/metrics").text
        assert "hymt_engine_restarts_total 1.0" in metrics and "hymt_engine_deaths_total 1.0" in metrics
        assert "hymt_engine_last_failure_timestamp_seconds 0.0" not in metrics


def test_requests_on_a_dying_engine_end_with_a_retryable_503(tiny_model_dir):
    factory = Factory(tiny_model_dir, step_s=0.01)
    with _client(factory) as c:
        assert c.app.state.hymt.service.wait_ready(20)
        answers: dict[str, object] = {}
        slow = {"text": "slow", "src": "en", "tgt": "de", "use_cache": False}

        def call(kind: str) -> None:
            if kind == "stream":
                with c.stream("POST", "/api/translate/stream", json=slow) as r:
                    answers[kind] = (r.status_code, r.read().decode())
            else:
                r = c.post("/api/translate", json=slow)
                answers[kind] = (r.status_code, r.json(), r.headers.get("retry-after"))

        threads = [threading.Thread(target=call, args=(kind,)) for kind in ("plain", "stream")]
        for thread in threads:
            thread.start()
        _wait(lambda: c.app.state.hymt.admission.requests == 2, timeout=10.0)
        time.sleep(0.2)  # both are generating
        killed = time.monotonic()
        factory.engines[-1].kill()
        for thread in threads:
            thread.join(10)
        assert time.monotonic() - killed < 2.0, "in-flight requests end at once"
        status, body, retry_after = answers["plain"]  # type: ignore[misc]
        assert status == 503 and body["error"]["type"] == "engine_restarting" and int(retry_after) >= 1
        status, text = answers["stream"]  # type: ignore[misc]
        assert status == 200 and text.rstrip().split("\n\n")[-1].startswith("event: error")
        assert "engine_restarting" in text.rstrip().split("\n\n")[-1]
        assert "EOFError" not in text and "EngineError" not in str(body)
        _wait(lambda: c.get("/ready").status_code == 200, timeout=20.0)


def test_gives_up_after_the_restarts_allowed(tiny_model_dir):
    factory = Factory(tiny_model_dir, fail_from=2)
    with _client(factory, engine_restarts=2) as c:
        supervisor = c.app.state.hymt.service.supervisor
        assert supervisor.wait_ready(20)
        factory.engines[-1].kill()
        took = _wait(supervisor.gave_up.is_set, timeout=10.0)
        assert 1.5 - 0.1 <= took, "two attempts after 0.5 s and 1 s of back-off"
        assert factory.builds == 3 and supervisor.exit_status == 3
        ready = c.get("/ready")
        assert ready.status_code == 503 and ready.json()["status"] == "failed"
        assert "gave up after 2 failed restarts" in ready.json()["error"]
        assert "/config.json" in ready.json()["error"] and str(tiny_model_dir) not in ready.json()["error"]
        assert "hymt_engine_failed_restarts_total 2.0" in c.get("/metrics").text


def test_no_restarts_allowed_gives_up_at_the_first_death(tiny_model_dir):
    factory = Factory(tiny_model_dir)
    with _client(factory, engine_restarts=0) as c:
        supervisor = c.app.state.hymt.service.supervisor
        assert supervisor.wait_ready(20)
        factory.engines[-1].kill()
        _wait(supervisor.gave_up.is_set, timeout=2.0)
        assert factory.builds == 1 and supervisor.exit_status == 3


def test_an_unexpected_load_error_is_named_in_the_log_only(tiny_model_dir):
    def broken(settings):
        raise KeyError(f"{tiny_model_dir}/secret")

    with TestClient(create_app(ServerSettings(model=str(tiny_model_dir)), translator_factory=broken)) as c:
        c.app.state.hymt.service.wait_ready(10)
        ready = c.get("/ready").json()
        assert ready["status"] == "failed" and "server log" in ready["error"]
        assert "KeyError" not in ready["error"] and "secret" not in ready["error"]
        assert "KeyError" in c.app.state.hymt.service.error  # the operator's text, for the log and the CLI
