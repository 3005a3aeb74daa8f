"""The messages of an engine process: typed, picklable, the step report in columns."""
from __future__ import annotations

import pickle

import pytest

from hymt.engine.interface import EngineStats
from hymt.engine.process_messages import (
    AbortRequest,
    AddRequest,
    Commands,
    EngineSpec,
    Rejection,
    StepReport,
)
from hymt.engine.sampling import SamplingParams
from hymt.errors import InvalidInputError


def test_a_step_report_gives_back_each_request_progress():
    progress = [("a", [5, 6], None, 1.0, 1.5, None), ("b", [7], "stop", 2.0, 2.5, 3.0)]
    rejected = (Rejection("c", InvalidInputError("too long", field="max_tokens")),)
    report = pickle.loads(pickle.dumps(StepReport.of(progress, rejected, EngineStats(num_running=1))))
    assert list(report.progress()) == progress
    assert report.request_ids == ("a", "b") and report.finish_reasons == (None, "stop")
    assert report.rejected[0].error.field == "max_tokens" and report.stats.num_running == 1
    empty = StepReport.of([], (), EngineStats(), step_error="boom")
    assert list(empty.progress()) == [] and empty.step_error == "boom"


def test_commands_keep_their_order_and_types():
    add = AddRequest("r1", [1, 2], SamplingParams(max_tokens=3), final_only=True)
    message = pickle.loads(pickle.dumps(Commands((add, AbortRequest("r0")))))
    assert message.commands == (add, AbortRequest("r0"))


def test_an_engine_process_runs_local_backends_only():
    with pytest.raises(InvalidInputError, match="valid: native, transformers, got 'openai'") as e:
        EngineSpec("openai")
    assert e.value.field == "backend"
    EngineSpec("transformers", "/models/m")
    EngineSpec("any", builder=dict)  # a builder decides for itself
