"""Offline throughput on a real (tiny) engine: token counts and rates from what came back."""
from __future__ import annotations

import pytest

from hymt.bench.offline import run_closed_loop, run_offline
from hymt.bench.workload import Workload
from hymt.engine.config import EngineConfig
from hymt.engine.interface import Engine
from hymt.engine.native_engine import NativeEngine
from hymt.engine.outputs import RequestOutput
from hymt.engine.sampling import SamplingParams
from hymt.testing import ENGINE_TEST_CONFIG


def test_counts_every_prompt_and_answer_token():
    w = Workload(num_requests=12, prompt_len_min=3, prompt_len_max=9, output_len=4)
    prompts = w.prompts(ENGINE_TEST_CONFIG["vocab_size"])
    engine = NativeEngine(dict(ENGINE_TEST_CONFIG), device="cpu", dtype="float32", random_weights=True)
    try:
        result, outputs = run_offline(engine, prompts, w.sampling, "native", note="x")
    finally:
        engine.close()
    assert [o.prompt_token_ids for o in outputs] == prompts
    assert result.num_requests == 12 and result.output_tokens == 48
    assert result.prompt_tokens == sum(len(p) for p in prompts)
    assert result.requests_per_s == result.num_requests / result.wall_s
    assert result.total_tokens_per_s == (result.prompt_tokens + result.output_tokens) / result.wall_s
    assert result.note == "x"
    # The run's steps, all eager on a CPU: every prompt token, then each answer token but the last
    assert result.steps is not None and result.steps.eager == result.steps.steps >= 4
    assert result.steps.tokens == result.prompt_tokens + 12 * 3 and result.steps.padding_tokens == 0
    assert result.phases is None  # the engine did not time its phases


def test_reports_the_phases_of_the_timed_run_only():
    w = Workload(num_requests=6, prompt_len_min=3, prompt_len_max=5, output_len=3)
    prompts = w.prompts(ENGINE_TEST_CONFIG["vocab_size"])
    engine = NativeEngine(dict(ENGINE_TEST_CONFIG), EngineConfig(step_profile="cpu"), device="cpu",
                          dtype="float32", random_weights=True)
    try:
        run_offline(engine, prompts, w.sampling, "warm-up")
        result, _ = run_offline(engine, prompts, w.sampling, "native")
    finally:
        engine.close()
    assert result.phases is not None and result.steps is not None
    # The warm-up's steps are not in the second run's phases.
    assert result.phases.steps == result.steps.steps and result.phases.tokens == result.steps.tokens
    assert set(result.phases.seconds) == {"schedule", "prepare", "forward", "sample", "wait", "postprocess"}
    assert 0 < sum(result.phases.seconds.values()) <= result.wall_s


class ShortEngine(Engine):
    """Answers every request with one token: a forced length the engine did not honour."""

    def __init__(self):
        self._queue = []

    def add_request(self, prompt_token_ids, params, request_id=None, *, final_only=False):
        rid = request_id or f"r{len(self._queue)}"
        self._queue.append((rid, list(prompt_token_ids)))
        return rid

    def step(self):
        done, self._queue = self._queue, []
        return [RequestOutput(rid, p, token_ids=[7], finished=True, finish_reason="stop") for rid, p in done]

    def abort(self, request_id):
        pass

    def has_unfinished(self):
        return bool(self._queue)


def test_short_forced_answers_are_reported_not_hidden():
    forced = SamplingParams(max_tokens=4, ignore_eos=True)
    result, _ = run_offline(ShortEngine(), [[1, 2, 3]] * 3, forced, "short", note="base")
    assert result.output_tokens == 3  # rates count the tokens that came back
    assert result.note == "base; 3 of 3 answers are not 4 tokens long"
    assert result.steps is None  # an engine that counts no steps
    unforced, _ = run_offline(ShortEngine(), [[1, 2, 3]] * 3, SamplingParams(max_tokens=4), "short")
    assert unforced.note == ""


def test_closed_loop_keeps_the_set_number_in_flight_and_answers_every_prompt():
    class CountingEngine(ShortEngine):
        most = 0

        def add_request(self, prompt_token_ids, params, request_id=None, *, final_only=False):
            rid = super().add_request(prompt_token_ids, params, request_id or f"r{id(prompt_token_ids)}")
            CountingEngine.most = max(CountingEngine.most, len(self._queue))
            return rid

        def step(self):  # one request finishes per step; its successor arrives at once
            done, self._queue = self._queue[:1], self._queue[1:]
            return [RequestOutput(rid, p, token_ids=[7] * 4, finished=True, finish_reason="length")
                    for rid, p in done]

    prompts = [[i, i + 1] for i in range(10)]
    result = run_closed_loop(CountingEngine(), prompts, SamplingParams(max_tokens=4, ignore_eos=True), 3, "c3")
    assert CountingEngine.most == 3
    assert result.num_requests == 10 and result.output_tokens == 40 and result.prompt_tokens == 20
    assert result.note == "3 requests in flight, the next submitted as each finishes"


def test_closed_loop_reports_each_requests_time_from_submission_to_its_end():
    class TimedEngine(ShortEngine):
        def add_request(self, prompt_token_ids, params, request_id=None, *, final_only=False):
            rid = super().add_request(prompt_token_ids, params, request_id or f"r{id(prompt_token_ids)}")
            self._added = {**getattr(self, "_added", {}), rid: len(getattr(self, "_added", {}))}
            return rid

        def step(self):  # request k was submitted at second k and ends 0.2 s + 0.1 s * k later
            done, self._queue = self._queue[:1], self._queue[1:]
            return [RequestOutput(rid, p, token_ids=[7] * 4, finished=True, finish_reason="length",
                                  arrival_time=float(self._added[rid]) + 1,
                                  finish_time=float(self._added[rid]) + 1.2 + 0.1 * self._added[rid])
                    for rid, p in done]

    result = run_closed_loop(TimedEngine(), [[i] for i in range(11)], SamplingParams(max_tokens=4, ignore_eos=True),
                             2, "c2")
    assert result.latency_ms_p50 == pytest.approx(700.0)  # 0.2 .. 1.2 s, median 0.7 s
    assert result.latency_ms_p90 == pytest.approx(1100.0)
