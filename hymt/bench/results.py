"""Typed, JSON-serializable results of `hymt bench`.

Times are seconds unless a field name says `_ms`; memory figures are bytes.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hymt.bench.peer import PeerResults
from hymt.engine.step_kinds import StepKinds
from hymt.engine.step_profile import StepProfile


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0-100) with linear interpolation; NaN for no values."""
    return float(np.percentile(np.asarray(values, dtype=np.float64), q)) if values else float("nan")


@dataclass(frozen=True)
class ThroughputResult:
    """One engine run over a set of requests submitted together (or one after another).

    Attributes:
        name: what ran, e.g. "native", "transformers generate, batch 1".
        num_requests: requests in this run (a baseline may run a subset of the workload).
        wall_s: wall time from submitting the first request to the last result.
        prompt_tokens / output_tokens: tokens read and generated in the run.
        requests_per_s / output_tokens_per_s / total_tokens_per_s: the rates over wall_s.
        note: how the figure was obtained when that is not obvious (subset, warm-up, ...).
        latency_ms_p50 / latency_ms_p90: per-request time from submission to the last token,
            where the run measures it (closed-loop runs); None otherwise.
        steps: the native engine's steps in this run, by graph or eager (None for other engines).
        phases: the native engine's time per step phase in this run, where it timed them
            (HYMT_PROFILE); None otherwise.
    """

    name: str
    num_requests: int
    wall_s: float
    prompt_tokens: int
    output_tokens: int
    requests_per_s: float
    output_tokens_per_s: float
    total_tokens_per_s: float
    note: str = ""
    latency_ms_p50: float | None = None
    latency_ms_p90: float | None = None
    steps: StepKinds | None = None
    phases: StepProfile | None = None

    @classmethod
    def measure(cls, name: str, num_requests: int, wall_s: float, prompt_tokens: int, output_tokens: int,
                note: str = "", latencies_s: list[float] | None = None,
                steps: StepKinds | None = None, phases: StepProfile | None = None) -> ThroughputResult:
        """latencies_s: each request's time from submission to its last token, when known."""
        wall = max(wall_s, 1e-9)
        p50 = p90 = None
        if latencies_s:
            p50, p90 = percentile(latencies_s, 50) * 1e3, percentile(latencies_s, 90) * 1e3
        return cls(name, num_requests, wall_s, prompt_tokens, output_tokens, num_requests / wall,
                   output_tokens / wall, (prompt_tokens + output_tokens) / wall, note, p50, p90, steps, phases)


@dataclass(frozen=True)
class LatencyResult:
    """Single requests run one after another (nothing else in flight).

    Attributes:
        name: the engine measured.
        num_requests: timed requests (warm-up excluded).
        output_tokens_mean: tokens generated per request.
        ttft_ms_p50 / ttft_ms_p90: time to first token, from the call to the first token
            (None when the engine does not stamp first tokens).
        total_ms_p50 / total_ms_p90 / total_ms_mean: from the call to the finished result.
    """

    name: str
    num_requests: int
    output_tokens_mean: float
    ttft_ms_p50: float | None
    ttft_ms_p90: float | None
    total_ms_p50: float
    total_ms_p90: float
    total_ms_mean: float

    @classmethod
    def from_samples(cls, name: str, ttft_s: list[float], total_s: list[float], tokens: list[int]) -> LatencyResult:
        ms_ttft = [t * 1e3 for t in ttft_s]
        ms_total = [t * 1e3 for t in total_s]
        return cls(
            name, len(total_s), float(np.mean(tokens)) if tokens else 0.0,
            percentile(ms_ttft, 50) if ms_ttft else None, percentile(ms_ttft, 90) if ms_ttft else None,
            percentile(ms_total, 50), percentile(ms_total, 90), float(np.mean(ms_total)) if ms_total else float("nan"),
        )


@dataclass(frozen=True)
class MemoryResult:
    """Device memory of the native engine's runs (before any baseline loads).

    Attributes:
        device: "cuda:0", "cpu", ...
        max_allocated_bytes / max_reserved_bytes: torch.cuda peaks over the native runs (0 on CPU).
        device_total_bytes: the device's memory (0 on CPU).
        engine_report: the engine's own report (weights, KV cache, activations, graphs,
            budget; hymt.engine.memory_report.MemoryReport.to_dict()), or None when it has none.
    """

    device: str
    max_allocated_bytes: int
    max_reserved_bytes: int
    device_total_bytes: int
    engine_report: dict | None


@dataclass(frozen=True)
class EnvInfo:
    """Where and when a benchmark ran."""

    command: str
    date: str
    device_name: str
    python_version: str
    torch_version: str
    transformers_version: str
    cuda_version: str | None
    hymt_version: str


@dataclass(frozen=True)
class BenchResult:
    """Everything one `hymt bench` run measured.

    Attributes:
        env: command line, date, device and versions.
        options: the options the run used (BenchOptions as a dict).
        model: what was loaded ("random weights, HY-MT1.5-1.8B shape" or the checkpoint dir).
        load_s: seconds to build the native engine (weights, profiling, graph capture).
        native / native_latency / memory: the native engine's figures.
        closed_loop: the native engine with N requests in flight, one run per N of
            `workload.closed_loop`, in that order.
        baselines: transformers runs, same weights, same process.
        baseline_latency: transformers generate() at batch 1, one request after another.
        skipped: lines saying what could not run and why.
        ratios: native / baseline requests/s per baseline name, plus "latency_p50" =
            transformers total p50 / native total p50.
        peer: llama.cpp's rows on the same workload (`--peer-results`), or None.
        dtype: the native engine's model dtype ("bfloat16", "float32", ...).
    """

    env: EnvInfo
    options: dict[str, Any]
    model: str
    load_s: float
    native: ThroughputResult
    native_latency: LatencyResult
    memory: MemoryResult
    baselines: tuple[ThroughputResult, ...] = ()
    baseline_latency: LatencyResult | None = None
    skipped: tuple[str, ...] = ()
    ratios: dict[str, float] = field(default_factory=dict)
    closed_loop: tuple[ThroughputResult, ...] = ()
    peer: PeerResults | None = None
    dtype: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def write_json(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2, default=str) + "\n")


@dataclass(frozen=True)
class ServerLoadResult:
    """A run of concurrent clients against a hymt server's native API.

    Attributes:
        url: the server root.
        concurrency: clients posting at once.
        num_requests: requests the run set out to send; `completed` answered 200.
        errors: requests that failed; `error_kinds` counts them by status code or exception.
        wall_s / requests_per_s: wall time of the run and completed requests per second.
        latency_ms_p50 / p90 / p99 / mean: per-request latency of the completed requests (None
            when none completed).
        completion_tokens / prompt_tokens: tokens the server reported (0 when it reports none).
        segments: engine requests behind the completed requests (the server splits a text into
            segments of at most 200 tokens and sends each to the engine); 0 when not reported.
        timed_out: True when the time limit stopped the run before every request was sent.
        processes: load-generator processes the clients were spread over.
        server_cpu_s / engine_cpu_s: CPU seconds the server's HTTP process and its engine
            process spent during the run (its /metrics before and after; scrapes and other
            clients included); None where the server does not export them.
        engine_steps: the engine's steps during the run, by graph or eager (None where the
            server does not export them).
        engine_prompt_tokens: prompt tokens the engine computed during the run; fewer than
            `prompt_tokens` by what its prefix cache served (None where not exported).
        run_tag: the tag in every text of the run (server_load.py).
    """

    url: str
    concurrency: int
    num_requests: int
    completed: int
    errors: int
    error_kinds: dict[str, int]
    wall_s: float
    requests_per_s: float
    latency_ms_p50: float | None
    latency_ms_p90: float | None
    latency_ms_p99: float | None
    latency_ms_mean: float | None
    completion_tokens: int
    timed_out: bool
    prompt_tokens: int = 0
    segments: int = 0
    processes: int = 1
    env: EnvInfo | None = None
    server_cpu_s: float | None = None
    engine_cpu_s: float | None = None
    engine_steps: StepKinds | None = None
    engine_prompt_tokens: int | None = None
    run_tag: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def write_json(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2, default=str) + "\n")
