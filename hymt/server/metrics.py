"""Prometheus metrics, one registry per app (several apps in one process stay apart).

Request series are labelled by protocol and route template (never by IP, key or raw path:
cardinality stays bounded, docs/reference/protocols.md §8). Engine series are read from the engine's
stats at scrape time by a collector, so they cost nothing between scrapes.

Under `hymt serve --http-workers N` each worker has its own registry: a scrape reaches one
worker, whose request, queue and process series are its own; the engine series are the one
engine's (as of that worker's last report from it). `WorkerCollector` adds which worker
answered and the CPU time of all the HTTP processes together (docs/ARCHITECTURE.md).
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Histogram,
    ProcessCollector,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from hymt.server.router_metrics import RouterMetricsCollector
from hymt.server.supervisor import PHASES, EngineEvents

# `*_created` timestamp series double every counter for no use here.
disable_created_metrics()

_LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)


class ServerMetrics:
    """The series hymt exports; handlers call `observe_*`, `/metrics` calls `render()`."""

    def __init__(self, stats: Callable[[], Any], queue: Callable[[], QueueState], model: Callable[[], ModelState]):
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter("hymt_requests", "HTTP requests by protocol, route and status",
                                ("protocol", "route", "status"), registry=self.registry)
        self.latency = Histogram("hymt_request_duration_seconds", "HTTP request latency",
                                 ("protocol", "route"), buckets=_LATENCY_BUCKETS, registry=self.registry)
        self.items = Counter("hymt_translated_items", "Texts translated (items of all requests)",
                             ("protocol",), registry=self.registry)
        self.chars = Counter("hymt_translated_characters", "Source characters translated",
                             ("protocol",), registry=self.registry)
        self.segments = Counter("hymt_translated_segments", "Segments translated", registry=self.registry)
        self.cache_hits = Counter("hymt_cache_hits", "Segments answered from the translation cache",
                                  registry=self.registry)
        self.retries = Counter("hymt_quality_retries", "Segments retried by the quality guard",
                               registry=self.registry)
        self.completion_tokens = Counter("hymt_request_completion_tokens",
                                         "Tokens generated for answered requests", ("protocol",),
                                         registry=self.registry)
        self.rejected = Counter("hymt_rejected_requests", "Requests refused before reaching the engine",
                                ("reason",), registry=self.registry)
        self.cancelled = Counter("hymt_cancelled_requests", "Requests cancelled (client gone or timeout)",
                                 ("reason",), registry=self.registry)
        self.registry.register(_EngineCollector(stats, queue, model))
        self.registry.register(RouterMetricsCollector(stats))  # vllm:* gauges that gateways route by
        ProcessCollector(registry=self.registry)  # process_cpu_seconds_total, memory, open fds (Linux)
        # Labelled children by label values: `labels()` takes a lock and rebuilds its key on
        # every call, per request. The label sets are bounded (protocols, route templates).
        self._request_children: dict[tuple[str, str, int], tuple[Any, Any]] = {}
        self._result_children: dict[str, tuple[Any, Any, Any]] = {}

    def observe_request(self, protocol: str, route: str, status: int, seconds: float) -> None:
        requests, latency = self._request_series(protocol, route, status)
        requests.inc()
        latency.observe(seconds)
        if status == 429:
            self.rejected.labels("queue_full").inc()
        elif status == 499:
            self.cancelled.labels("client_disconnected").inc()
        elif status == 504:
            self.cancelled.labels("timeout").inc()

    def observe_results(self, protocol: str, results: Iterable[Any]) -> None:
        """Count what a request translated (TranslationResults)."""
        for result in results:
            items, chars, completion_tokens = self._result_series(protocol)
            items.inc()
            segments = getattr(result, "segments", ()) or ()
            chars.inc(sum(len(getattr(s, "source", "")) for s in segments))
            self.segments.inc(len(segments))
            self.cache_hits.inc(sum(1 for s in segments if getattr(s, "cached", False)))
            self.retries.inc(sum(1 for s in segments if getattr(s, "retried", False)))
            completion_tokens.inc(getattr(result, "completion_tokens", 0) or 0)

    def _request_series(self, protocol: str, route: str, status: int) -> tuple[Any, Any]:
        """The children of the request counter and the latency histogram for these labels."""
        children = self._request_children.get((protocol, route, status))
        if children is None:
            children = (self.requests.labels(protocol, route, str(status)), self.latency.labels(protocol, route))
            self._request_children[(protocol, route, status)] = children
        return children

    def _result_series(self, protocol: str) -> tuple[Any, Any, Any]:
        """The per-protocol children of items, chars and completion tokens (created on the
        first result, as `labels()` in the loop would: no empty series before it)."""
        children = self._result_children.get(protocol)
        if children is None:
            children = (self.items.labels(protocol), self.chars.labels(protocol),
                        self.completion_tokens.labels(protocol))
            self._result_children[protocol] = children
        return children

    def render(self) -> bytes:
        return generate_latest(self.registry)


@dataclass(frozen=True)
class QueueState:
    """Admission as /metrics reports it."""

    texts: int  # texts admitted and not yet answered
    requests: int  # requests admitted and not yet answered
    limit: int  # --max-queue, in texts
    draining: bool  # SIGTERM closed admission


@dataclass(frozen=True)
class ModelState:
    """The model's life as /metrics reports it."""

    phase: str
    events: EngineEvents


class _EngineCollector(Collector):
    """Engine load, the engine's life and the admission queue, read at scrape time."""

    def __init__(self, stats: Callable[[], Any], queue: Callable[[], QueueState], model: Callable[[], ModelState]):
        self._stats = stats
        self._queue = queue
        self._model = model

    def collect(self) -> Iterable[Metric]:
        stats = self._stats()
        queue = self._queue()
        total = getattr(stats, "kv_blocks_total", 0)
        used = getattr(stats, "kv_blocks_used", 0)
        yield from self._lifecycle()
        yield _gauge("hymt_queue_depth", "Texts admitted and not yet answered (--max-queue counts these)", queue.texts)
        yield _gauge("hymt_queue_requests", "Requests admitted and not yet answered", queue.requests)
        yield _gauge("hymt_queue_limit", "Admission limit in texts (--max-queue)", queue.limit)
        yield _gauge("hymt_draining", "1 once SIGTERM closed admission", int(queue.draining))
        yield _gauge("hymt_num_requests_running", "Sequences in the engine's running batch", stats.num_running)
        yield _gauge("hymt_num_requests_waiting", "Sequences waiting in the engine", stats.num_waiting)
        yield _gauge("hymt_kv_blocks_used", "Paged KV blocks in use", used)
        yield _gauge("hymt_kv_blocks_free", "Paged KV blocks free", max(0, total - used))
        yield _gauge("hymt_kv_cache_usage_ratio", "Fraction of KV blocks in use", used / total if total else 0.0)
        yield _gauge("hymt_gpu_memory_used_bytes", "Device memory the engine holds", stats.gpu_memory_bytes)
        yield _counter("hymt_generation_tokens", "Tokens generated by the engine (rate = tokens/s)",
                       stats.generated_tokens_total)
        yield _counter("hymt_generation_steps", "Engine steps that generated tokens (tokens / steps = mean batch)",
                       stats.generation_steps_total)
        yield _counter("hymt_prompt_tokens", "Prompt tokens computed by the engine", stats.prompt_tokens_total)
        kinds = stats.step_kinds
        by_kind = CounterMetricFamily("hymt_engine_steps", "Engine steps by how they ran: in a decode graph, "
                                      "in a step graph, or eagerly (no graph covers them)", labels=["kind"])
        for kind, count in (("decode_graph", kinds.decode_graph), ("step_graph", kinds.step_graph),
                            ("eager", kinds.eager)):
            by_kind.add_metric([kind], count)
        yield by_kind
        yield _counter("hymt_engine_step_tokens", "Real tokens the engine's steps computed", kinds.tokens)
        yield _counter("hymt_engine_graph_padding_tokens",
                       "Rows the CUDA graphs computed past their steps' real tokens", kinds.padding_tokens)
        yield _counter("hymt_engine_process_cpu_seconds",
                       "CPU time of the engine's own process (0 when it runs in the server process)",
                       stats.engine_process_cpu_seconds)


    def _lifecycle(self) -> Iterable[Metric]:
        model = self._model()
        events = model.events
        yield _gauge("hymt_model_ready", "1 when the model is loaded and warm", int(model.phase == "ready"))
        phase = GaugeMetricFamily("hymt_model_phase", "1 for the model's current phase", labels=["phase"])
        for one in PHASES:
            phase.add_metric([one], float(model.phase == one))
        yield phase
        for name, doc, value in (
            ("hymt_engine_restarts", "Engines rebuilt after their process died", events.restarts),
            ("hymt_engine_deaths", "Engine processes found dead", events.deaths),
            ("hymt_engine_failed_restarts", "Engine rebuilds that failed", events.failed_restarts),
        ):
            yield _counter(name, doc, value)
        yield _gauge("hymt_engine_last_failure_timestamp_seconds",
                     "Unix time of the last engine death or failed restart (0: none)", events.last_failure_at or 0.0)


def _gauge(name: str, doc: str, value: float) -> GaugeMetricFamily:
    metric = GaugeMetricFamily(name, doc)
    metric.add_metric([], float(value))
    return metric


def _counter(name: str, doc: str, value: float) -> CounterMetricFamily:
    metric = CounterMetricFamily(name, doc)
    metric.add_metric([], value)
    return metric


class WorkerCollector(Collector):
    """`hymt_http_worker{worker, pid}` (this worker) and `hymt_http_cpu_seconds_total`: the CPU
    time of every live HTTP process of the server (the workers and their parent), read from
    /proc at scrape time, so that one scrape tells what the HTTP layer costs (Linux only)."""

    def __init__(self, index: int, pids: Callable[[], Sequence[int]]):
        self._index = index
        self._pids = pids

    def collect(self) -> Iterable[Metric]:
        info = GaugeMetricFamily("hymt_http_worker", "1, labelled with the HTTP worker that answered this scrape",
                                 labels=["worker", "pid"])
        info.add_metric([str(self._index), str(os.getpid())], 1.0)
        yield info
        seconds = [process_cpu_seconds(pid) for pid in self._pids()]
        if any(s is not None for s in seconds):
            cpu = CounterMetricFamily("hymt_http_cpu_seconds",
                                      "CPU time of all the server's HTTP processes together (workers and parent)")
            cpu.add_metric([], sum(s for s in seconds if s is not None))
            yield cpu


_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def process_cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of a process of this machine; None where /proc cannot tell."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / _TICKS  # utime, stime: fields 14 and 15 of proc(5)
