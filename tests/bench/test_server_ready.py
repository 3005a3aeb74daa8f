"""Waiting for every HTTP worker's model, against a stand-in whose /metrics plays the workers."""
from __future__ import annotations

import pytest

from hymt.bench.server_load import ServerLoadOptions, run_server_load
from hymt.bench.server_ready import ServerNotReadyError, wait_for_ready_workers
from hymt.errors import InvalidInputError

from .stand_in_server import StandInServer


def _metrics(worker: str | None, ready: bool) -> tuple[int, str]:
    """A 200 scrape of worker `worker` (None: a server of one process, which names no worker)."""
    lines = ["# TYPE hymt_model_ready gauge", f"hymt_model_ready {1.0 if ready else 0.0}"]
    if worker is not None:
        pid = 4000 + int(worker)
        lines += ["# TYPE hymt_http_worker gauge", f'hymt_http_worker{{pid="{pid}",worker="{worker}"}} 1.0']
    return 200, "\n".join(lines) + "\n"


def test_waits_until_each_worker_has_reported_ready():
    script = [_metrics("1", False), _metrics("2", True), _metrics("2", True), (503, "restarting"),
              _metrics("1", True)]
    with StandInServer(metrics=script) as server:
        assert wait_for_ready_workers(server.url, 2, poll_s=0) == {"1", "2"}
    assert server.events == ["metrics"] * 5  # on past worker 2 until worker 1 was ready too


def test_a_single_process_server_counts_as_worker_1():
    with StandInServer(metrics=[_metrics(None, False), _metrics(None, True)]) as server:
        assert wait_for_ready_workers(server.url, 1, poll_s=0) == {"1"}
    assert len(server.events) == 2


def test_gives_up_naming_the_workers_it_saw():
    with StandInServer(metrics=[_metrics("2", True)]) as server:
        with pytest.raises(ServerNotReadyError, match=r"1 of 2 HTTP workers .* \(seen: \['2'\]\)"):
            wait_for_ready_workers(server.url, 2, timeout_s=0.3, poll_s=0.01)


def test_a_metrics_page_behind_a_key_fails_at_once():
    with StandInServer(metrics=[(401, "{}")]) as server:
        with pytest.raises(ServerNotReadyError, match="API key"):
            wait_for_ready_workers(server.url, 1, timeout_s=30)
    assert server.events == ["metrics"]


def test_a_load_run_starts_once_the_workers_are_ready():
    script = [_metrics("1", False), _metrics("1", True), _metrics("2", False), _metrics("2", True)]
    with StandInServer(metrics=script) as server:
        options = ServerLoadOptions(url=server.url, concurrency=2, num_requests=6, output_len=4, wait_workers=2)
        result = run_server_load(options)
    assert result.completed == 6
    first = server.events.index("translate")
    assert server.events[:first].count("metrics") >= len(script)  # every worker was seen ready first


def test_wait_workers_must_not_be_negative():
    with pytest.raises(InvalidInputError, match="wait_workers") as err:
        ServerLoadOptions(url="http://127.0.0.1:1", wait_workers=-1)
    assert err.value.field == "wait_workers"
