"""CPU seconds a hymt server has used, read from its /metrics: `hymt bench --server` reads them
before and after a run, so each run says which process (HTTP or engine) a request costs most.

The HTTP process exports `process_cpu_seconds_total` (prometheus_client's process collector,
Linux only); an engine in its own process exports `hymt_engine_process_cpu_seconds_total`.
Under `hymt serve --http-workers N` a scrape reaches one worker, which also exports
`hymt_http_cpu_seconds_total`, the CPU of all the HTTP processes together: read instead.
"""
from __future__ import annotations

from dataclasses import dataclass

import httpx
from prometheus_client.parser import text_string_to_metric_families

_SERVER = "process_cpu_seconds_total"
_ALL_HTTP = "hymt_http_cpu_seconds_total"  # every HTTP worker and their parent
_ENGINE = "hymt_engine_process_cpu_seconds_total"


@dataclass(frozen=True)
class ServerCpu:
    """CPU seconds so far; None where the server does not export the series."""

    server_s: float | None
    engine_s: float | None

    def since(self, before: ServerCpu) -> ServerCpu:
        """What was spent between `before` and this reading."""
        return ServerCpu(_minus(self.server_s, before.server_s), _minus(self.engine_s, before.engine_s))


def read_server_cpu(url: str, headers: dict[str, str] | None = None, timeout_s: float = 10.0) -> ServerCpu:
    """Scrape `url`/metrics; a server without the series (or without /metrics) gives Nones."""
    try:
        resp = httpx.get(url.rstrip("/") + "/metrics", headers=headers or {}, timeout=timeout_s)
        resp.raise_for_status()
        samples = {s.name: s.value for family in text_string_to_metric_families(resp.text) for s in family.samples}
    except (httpx.HTTPError, ValueError):
        return ServerCpu(None, None)
    engine = samples.get(_ENGINE)
    server = samples.get(_ALL_HTTP, samples.get(_SERVER))
    return ServerCpu(server, engine if engine else None)  # 0: engine in the HTTP process


def _minus(after: float | None, before: float | None) -> float | None:
    return None if after is None or before is None else after - before
