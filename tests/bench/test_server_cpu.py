"""read_server_cpu: the HTTP and engine CPU seconds a server's /metrics export."""
from __future__ import annotations

import httpx
import pytest

from hymt.bench import server_cpu
from hymt.bench.server_cpu import ServerCpu, read_server_cpu

ONE_PROCESS = """process_cpu_seconds_total 12.5
hymt_engine_process_cpu_seconds_total 40.0
"""
WORKERS = ONE_PROCESS + """hymt_http_cpu_seconds_total 30.25
"""


def _serving(monkeypatch, text: str) -> None:
    def get(url, headers=None, timeout=None):
        assert url == "http://h:1/metrics"
        return httpx.Response(200, text=text, request=httpx.Request("GET", url))

    monkeypatch.setattr(server_cpu.httpx, "get", get)


@pytest.mark.parametrize(("text", "http_s"), [(ONE_PROCESS, 12.5), (WORKERS, 30.25)])
def test_the_http_cpu_is_every_http_process_where_the_server_has_several(monkeypatch, text, http_s):
    _serving(monkeypatch, text)
    assert read_server_cpu("http://h:1/") == ServerCpu(http_s, 40.0)


def test_an_engine_in_the_http_process_reports_no_engine_cpu(monkeypatch):
    _serving(monkeypatch, "process_cpu_seconds_total 3.0\nhymt_engine_process_cpu_seconds_total 0.0\n")
    after = read_server_cpu("http://h:1")
    assert after == ServerCpu(3.0, None)
    assert after.since(ServerCpu(1.0, None)) == ServerCpu(2.0, None)
