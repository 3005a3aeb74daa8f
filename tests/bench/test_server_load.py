"""`hymt bench --server` against a stand-in native API on loopback."""
from __future__ import annotations

import os

import pytest

from hymt.bench.server_load import ServerLoadOptions, run_server_load
from hymt.errors import InvalidInputError

from .stand_in_server import StandInServer


def test_counts_completions_errors_and_tokens():
    with StandInServer(reject_every=5) as server:
        options = ServerLoadOptions(url=server.url, concurrency=4, num_requests=20, output_len=8, src="de", tgt="ja")
        result = run_server_load(options)
    assert len(server.bodies) == 20
    assert result.completed == 16 and result.errors == 4 and result.error_kinds == {"429": 4}
    assert result.completion_tokens == 16 * 8
    assert result.requests_per_s == result.completed / result.wall_s
    assert result.latency_ms_p50 <= result.latency_ms_p90 <= result.latency_ms_p99
    assert not result.timed_out
    body = server.bodies[0]
    assert body["src"] == "de" and body["tgt"] == "ja" and body["use_cache"] is False
    assert body["retry"] is False  # one engine request per request, as offline
    assert body["sampling"] == {"max_tokens": 8, "ignore_eos": True, "temperature": 0}
    assert len({b["text"] for b in server.bodies}) == 20  # unique texts: no cache hits
    # the stand-in has no /metrics
    assert result.server_cpu_s is None and result.engine_cpu_s is None and result.engine_steps is None


def test_api_key_is_sent_and_wrong_keys_are_counted():
    with StandInServer(api_key="k1") as server:
        good = run_server_load(ServerLoadOptions(url=server.url, concurrency=2, num_requests=4, api_key="k1"))
        bad = run_server_load(ServerLoadOptions(url=server.url, concurrency=2, num_requests=3, api_key="nope"))
    assert good.completed == 4 and good.errors == 0
    assert bad.completed == 0 and bad.error_kinds == {"401": 3} and bad.latency_ms_p50 is None


def test_unreachable_server_is_counted_as_connection_errors():
    with StandInServer() as server:
        url = server.url
    result = run_server_load(ServerLoadOptions(url=url, concurrency=2, num_requests=3, timeout_s=2))
    assert result.completed == 0 and result.errors == 3 and set(result.error_kinds) == {"ConnectError"}


def test_time_limit_stops_new_requests():
    with StandInServer() as server:
        result = run_server_load(ServerLoadOptions(url=server.url, concurrency=1, num_requests=10**6,
                                                   time_limit_s=0.3))
    assert result.timed_out and 0 < result.completed < 10**6


def test_every_run_tags_its_texts_afresh_so_no_run_repeats_another():
    first, second = (ServerLoadOptions(url="http://x", words=8) for _ in range(2))
    assert first.run_tag != second.run_tag
    assert first.payload(0)["text"] != second.payload(0)["text"]
    # the same words, so the same lengths, in every run
    assert first.payload(0)["text"].split(":")[1] == second.payload(0)["text"].split(":")[1]
    repeat = ServerLoadOptions(url="http://x", words=8, run_tag=first.run_tag)
    assert repeat.payload(5) == first.payload(5)


def test_bad_options_name_the_field():
    with pytest.raises(InvalidInputError) as err:
        ServerLoadOptions(url="localhost:8000")
    assert err.value.field == "server"
    with pytest.raises(InvalidInputError) as err:
        ServerLoadOptions(url="http://x", concurrency=0)
    assert err.value.field == "concurrency"


def test_clients_spread_over_processes_send_every_request_once():
    with StandInServer() as server:
        options = ServerLoadOptions(url=server.url, concurrency=4, num_requests=30, output_len=3, processes=2)
        result = run_server_load(options)
    assert result.processes == 2 and result.completed == 30 and result.errors == 0
    tags = [b["text"].split(":")[0].split()[1].rsplit("-", 1) for b in server.bodies]
    assert {tag for tag, _ in tags} == {options.run_tag}  # one run, one tag in every process
    assert sorted(int(index) for _, index in tags) == list(range(30))
    assert result.completion_tokens == 30 * 3 and result.segments == 30
    assert result.requests_per_s == result.completed / result.wall_s


def test_automatic_process_count_grows_with_clients_and_is_bounded():
    assert ServerLoadOptions(url="http://x", concurrency=16).processes == 1
    many = ServerLoadOptions(url="http://x", concurrency=4096).processes
    assert 1 <= many <= max(1, (os.cpu_count() or 2) // 2)
    with pytest.raises(InvalidInputError) as err:
        ServerLoadOptions(url="http://x", concurrency=2, processes=3)
    assert err.value.field == "processes"


@pytest.mark.parametrize(("computed", "says"), [
    (600, "600 of 600 (100%)\n"),
    (420, "420 of 600 (70%; the prefix cache served the rest)"),
    (660, "660 of 600 (110%; preempted requests were computed again)"),
])
def test_the_report_says_how_many_prompt_tokens_the_engine_computed(computed, says):
    from dataclasses import replace

    from hymt.bench.report import format_server_load

    with StandInServer() as server:
        result = run_server_load(ServerLoadOptions(url=server.url, concurrency=2, num_requests=30, output_len=2))
    assert result.prompt_tokens == 600 and result.engine_prompt_tokens is None  # 20 a request; no /metrics
    assert "prompt tokens computed" not in format_server_load(result)
    report = format_server_load(replace(result, engine_prompt_tokens=computed)) + "\n"
    assert f"prompt tokens computed by the engine: {says}" in report
