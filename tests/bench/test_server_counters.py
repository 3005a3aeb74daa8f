"""read_server_counters: the HTTP and engine CPU seconds and the engine's steps a server's /metrics export."""
from __future__ import annotations

import httpx
import pytest

from hymt.bench import server_counters
from hymt.bench.server_counters import ServerCounters, read_server_counters
from hymt.engine.step_kinds import StepKinds

ONE_PROCESS = """process_cpu_seconds_total 12.5
hymt_engine_process_cpu_seconds_total 40.0
"""
WORKERS = ONE_PROCESS + """hymt_http_cpu_seconds_total 30.25
"""
STEPS = """# TYPE hymt_engine_steps counter
hymt_engine_steps_total{kind="decode_graph"} 900.0
hymt_engine_steps_total{kind="step_graph"} 90.0
hymt_engine_steps_total{kind="eager"} 10.0
# TYPE hymt_engine_step_tokens counter
hymt_engine_step_tokens_total 60000.0
# TYPE hymt_engine_graph_padding_tokens counter
hymt_engine_graph_padding_tokens_total 4000.0
"""


def _serving(monkeypatch, text: str) -> None:
    def get(url, headers=None, timeout=None):
        assert url == "http://h:1/metrics"
        return httpx.Response(200, text=text, request=httpx.Request("GET", url))

    monkeypatch.setattr(server_counters.httpx, "get", get)


@pytest.mark.parametrize(("text", "http_s"), [(ONE_PROCESS, 12.5), (WORKERS, 30.25)])
def test_the_http_cpu_is_every_http_process_where_the_server_has_several(monkeypatch, text, http_s):
    _serving(monkeypatch, text)
    assert read_server_counters("http://h:1/") == ServerCounters(http_s, 40.0)


def test_an_engine_in_the_http_process_reports_no_engine_cpu(monkeypatch):
    _serving(monkeypatch, "process_cpu_seconds_total 3.0\nhymt_engine_process_cpu_seconds_total 0.0\n")
    after = read_server_counters("http://h:1")
    assert after == ServerCounters(3.0, None)
    assert after.since(ServerCounters(1.0, None)) == ServerCounters(2.0, None)


def test_engine_steps_by_kind_and_their_difference_over_a_run(monkeypatch):
    _serving(monkeypatch, ONE_PROCESS + STEPS)
    after = read_server_counters("http://h:1")
    assert after.engine_steps == StepKinds(decode_graph=900, step_graph=90, eager=10, tokens=60000,
                                           padding_tokens=4000)
    before = ServerCounters(10.0, 30.0, StepKinds(decode_graph=800, step_graph=80, eager=0, tokens=50000,
                                                  padding_tokens=3000))
    run = after.since(before)
    assert run.engine_steps == StepKinds(decode_graph=100, step_graph=10, eager=10, tokens=10000, padding_tokens=1000)
    assert run.engine_steps.describe() == (
        "120 steps: 100 decode graph, 10 step graph, 10 eager; padding 9.1 % of the rows computed")
    assert after.since(ServerCounters(10.0, 30.0)).engine_steps is None  # not read before: no difference


def test_prompt_tokens_the_engine_computed_over_a_run(monkeypatch):
    _serving(monkeypatch, ONE_PROCESS + "# TYPE hymt_prompt_tokens counter\nhymt_prompt_tokens_total 5000.0\n")
    after = read_server_counters("http://h:1")
    assert after.prompt_tokens == 5000
    assert after.since(ServerCounters(10.0, 30.0, prompt_tokens=4200)).prompt_tokens == 800
    assert after.since(ServerCounters(10.0, 30.0)).prompt_tokens is None  # not read before
