"""An in-process app over a scripted engine, for the job tests: `job_app(**settings)` is a
context manager yielding (TestClient, engines made); the engine upper-cases each source,
`step_s` slows each engine step (jobs then last long enough to watch)."""
from __future__ import annotations

import contextlib
import time

import pytest
from documents_support import wait_for
from fastapi.testclient import TestClient

from hymt.server.app import create_app
from hymt.server.settings import ServerSettings
from hymt.testing import ScriptedEngine, source_of

READY_TIMEOUT_S = 60


class SlowEngine(ScriptedEngine):
    """A ScriptedEngine whose steps take `step_s` (a model's time per token)."""

    def __init__(self, *args, step_s: float = 0.0, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.step_s = step_s

    def step(self):
        if self.step_s and self.has_unfinished():
            time.sleep(self.step_s)
        return super().step()


def upper_source(user_turn, params):
    return source_of(user_turn).upper()


@pytest.fixture
def job_app(tiny_model_dir, tmp_path):
    from hymt.checkpoint import load_checkpoint
    from hymt.translate import Translator

    checkpoint = load_checkpoint(tiny_model_dir)

    @contextlib.contextmanager
    def start(step_s: float = 0.0, answer=upper_source, **settings):
        engines: list[SlowEngine] = []

        def factory(_settings):
            engine = SlowEngine(checkpoint, answer, step_s=step_s)
            engines.append(engine)
            return Translator(str(tiny_model_dir), engine=engine, cache=False)

        settings.setdefault("jobs_dir", str(tmp_path / "jobs"))
        app = create_app(ServerSettings(model=str(tiny_model_dir), **settings), translator_factory=factory)
        with TestClient(app) as client:
            wait_for(lambda: client.get("/ready").status_code == 200, READY_TIMEOUT_S)
            yield client, engines

    return start
