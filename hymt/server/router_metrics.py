"""Load gauges under the names that LLM gateways read, so they route to hymt replicas unchanged.

Gateways that balance OpenAI-compatible servers by load scrape each server's `/metrics` for
vLLM's gauges (docs/reference/router-metrics.md): the Kubernetes Gateway API Inference
Extension's endpoint picker (its model-server protocol), vLLM's router and the SGLang gateway's
vLLM-compatible policies. hymt exports the same three beside its own `hymt_*` series, read
from the same engine stats at scrape time:

    vllm:num_requests_running   sequences in the engine's running batch
    vllm:num_requests_waiting   sequences waiting for admission to the batch
    vllm:kv_cache_usage_perc    fraction (0..1) of paged KV blocks in use
    vllm:gpu_cache_usage_perc   the same fraction under its pre-V1 name (older gateways)

hymt's engine sequences are segments (one request may carry several), which is the unit of
work a batch slot holds, as a request is in vLLM.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from hymt.engine.interface import EngineStats

#: The gauge names, owned here: docs and tests import them.
RUNNING = "vllm:num_requests_running"
WAITING = "vllm:num_requests_waiting"
KV_CACHE_USAGE = "vllm:kv_cache_usage_perc"
KV_CACHE_USAGE_V0 = "vllm:gpu_cache_usage_perc"
ROUTER_GAUGES = (RUNNING, WAITING, KV_CACHE_USAGE, KV_CACHE_USAGE_V0)


class RouterMetricsCollector(Collector):
    """The gateway-facing gauges, read from `stats()` at scrape time."""

    def __init__(self, stats: Callable[[], EngineStats]):
        self._stats = stats

    def collect(self) -> Iterable[Metric]:
        stats = self._stats()
        total, used = stats.kv_blocks_total, stats.kv_blocks_used
        usage = used / total if total else 0.0
        yield _gauge(RUNNING, "Sequences in the engine's running batch (vLLM-compatible name)", stats.num_running)
        yield _gauge(WAITING, "Sequences waiting for the engine's batch (vLLM-compatible name)", stats.num_waiting)
        yield _gauge(KV_CACHE_USAGE, "Fraction of paged KV blocks in use, 0..1 (vLLM-compatible name)", usage)
        yield _gauge(KV_CACHE_USAGE_V0, "Fraction of paged KV blocks in use, 0..1 (vLLM's pre-V1 name)", usage)


def _gauge(name: str, doc: str, value: float) -> GaugeMetricFamily:
    metric = GaugeMetricFamily(name, doc)
    metric.add_metric([], float(value))
    return metric
