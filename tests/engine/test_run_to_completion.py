"""run_to_completion: the loop behind Engine.generate, LLM.generate and the closed-loop benchmark."""
from __future__ import annotations

import pytest
from engine_stand_ins import FAULT, CountingEngine

from hymt.engine.outputs import RequestOutput
from hymt.engine.run_to_completion import run_to_completion
from hymt.engine.sampling import SamplingParams
from hymt.errors import EngineError


def requests(*specs: tuple[int, int]):
    """(first prompt token, max_tokens) per request."""
    return [([first], SamplingParams(max_tokens=n)) for first, n in specs]


def test_outputs_come_back_in_input_order_with_every_step_reported():
    seen: list[RequestOutput] = []
    outs = run_to_completion(CountingEngine(), requests((10, 3), (50, 1), (7, 2)), on_output=seen.append)
    assert [o.token_ids for o in outs] == [[10, 11, 12], [50], [7, 8]]
    assert all(o.finished for o in outs)
    assert len(seen) == 3 + 1 + 2 and [o.finished for o in seen].count(True) == 3


def test_max_in_flight_adds_the_next_as_one_finishes():
    class Watched(CountingEngine):
        most = 0

        def add_request(self, *args, **kwargs):
            rid = super().add_request(*args, **kwargs)
            Watched.most = max(Watched.most, len(self.reqs))
            return rid

    outs = run_to_completion(Watched(), requests(*((i * 10, 1 + i % 3) for i in range(7))), max_in_flight=2)
    assert Watched.most == 2
    assert [o.token_ids[0] for o in outs] == [0, 10, 20, 30, 40, 50, 60]


def test_a_failure_aborts_what_is_still_running():
    engine = CountingEngine()
    with pytest.raises(RuntimeError, match="kernel fault"):
        run_to_completion(engine, requests((1, 5), (FAULT, 5)))
    assert len(engine.aborted) == 2 and not engine.reqs


def test_an_engine_that_drops_a_request_is_an_error():
    class Forgetful(CountingEngine):
        def add_request(self, *args, **kwargs):
            rid = super().add_request(*args, **kwargs)
            if len(self.reqs) == 2:
                del self.reqs[rid]  # accepted, never answered
            return rid

    with pytest.raises(EngineError, match="unfinished"):
        run_to_completion(Forgetful(), requests((1, 2), (2, 2)))
