"""Counters a hymt server's /metrics export, read before and after a `hymt bench --server` run:
the CPU seconds of its HTTP and engine processes (which one a request costs most), the
engine's steps by graph or eager, and the prompt tokens it computed (those its prefix cache
served are not).

The HTTP process exports `process_cpu_seconds_total` (prometheus_client's process collector,
Linux only); an engine in its own process exports `hymt_engine_process_cpu_seconds_total`.
Under `hymt serve --http-workers N` a scrape reaches one worker, which also exports
`hymt_http_cpu_seconds_total`, the CPU of all the HTTP processes together: read instead.
Every worker exports the one engine's steps (`hymt_engine_steps_total{kind}`), so one scrape
has them all.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

import httpx
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from hymt.engine.step_kinds import StepKinds

_SERVER = "process_cpu_seconds_total"
_ALL_HTTP = "hymt_http_cpu_seconds_total"  # every HTTP worker and their parent
_ENGINE = "hymt_engine_process_cpu_seconds_total"
_STEPS = "hymt_engine_steps_total"
_TOKENS = "hymt_engine_step_tokens_total"
_PADDING = "hymt_engine_graph_padding_tokens_total"
_PROMPT = "hymt_prompt_tokens_total"
_Number = TypeVar("_Number", int, float)


@dataclass(frozen=True)
class ServerCounters:
    """Counters so far; None where the server does not export them.

    Attributes:
        server_s / engine_s: CPU seconds of the HTTP process(es) and of the engine's process.
        engine_steps: the engine's steps by how they ran, with their tokens and padding rows.
        prompt_tokens: prompt tokens the engine computed.
    """

    server_s: float | None
    engine_s: float | None
    engine_steps: StepKinds | None = None
    prompt_tokens: int | None = None

    def since(self, before: ServerCounters) -> ServerCounters:
        """What was spent between `before` and this reading."""
        steps = None
        if self.engine_steps is not None and before.engine_steps is not None:
            steps = self.engine_steps.since(before.engine_steps)
        return ServerCounters(_minus(self.server_s, before.server_s), _minus(self.engine_s, before.engine_s), steps,
                              _minus(self.prompt_tokens, before.prompt_tokens))


def scrape_metrics(url: str, headers: dict[str, str] | None = None, timeout_s: float = 10.0) -> list[Sample]:
    """The samples of `url`/metrics, over a new connection (under --http-workers, any worker may
    answer). Raises httpx.HTTPError (unreachable, or an error status) or ValueError (not the
    Prometheus text format)."""
    resp = httpx.get(url.rstrip("/") + "/metrics", headers=headers or {}, timeout=timeout_s)
    resp.raise_for_status()
    return [s for family in text_string_to_metric_families(resp.text) for s in family.samples]


def read_server_counters(url: str, headers: dict[str, str] | None = None, timeout_s: float = 10.0) -> ServerCounters:
    """Scrape `url`/metrics; a server without a series (or without /metrics) gives None for it."""
    try:
        samples = scrape_metrics(url, headers, timeout_s)
    except (httpx.HTTPError, ValueError):
        return ServerCounters(None, None)
    values = {s.name: s.value for s in samples if not s.labels}
    steps = {s.labels.get("kind"): int(s.value) for s in samples if s.name == _STEPS}
    engine = values.get(_ENGINE)
    server = values.get(_ALL_HTTP, values.get(_SERVER))
    engine_steps = None
    if steps:
        engine_steps = StepKinds(decode_graph=steps.get("decode_graph", 0), step_graph=steps.get("step_graph", 0),
                                 eager=steps.get("eager", 0), tokens=int(values.get(_TOKENS, 0)),
                                 padding_tokens=int(values.get(_PADDING, 0)))
    prompt = values.get(_PROMPT)
    return ServerCounters(server, engine if engine else None, engine_steps,  # engine 0: in the HTTP process
                          int(prompt) if prompt is not None else None)


def _minus(after: _Number | None, before: _Number | None) -> _Number | None:
    return None if after is None or before is None else after - before
