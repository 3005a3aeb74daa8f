"""llama.cpp as a peer: its measured rows, read from the JSON that tools/llamacpp/run_peer.py
writes, and the table that sets them beside hymt's own figures in `hymt bench`.

The peer runs the same random weights converted to GGUF (F16 against hymt's bf16, Q8_0
against int8, Q4_K_M against int4) on the same workload lengths. Two llama.cpp tools give
rows: `llama-server` driven by concurrent clients (requests trickle in and out, as hymt's
closed-loop run) and `llama-batched-bench` (B sequences prefilled and decoded together, every
one finishing at the end of the batch).
"""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hymt.errors import InvalidInputError

if TYPE_CHECKING:  # results.py holds a PeerResults, so it cannot be imported here at run time
    from hymt.bench.results import LatencyResult, ThroughputResult

PEER_TOOLS = ("llama-server", "llama-batched-bench")
#: hymt weight scheme (EngineConfig.quantization; None = unquantized, bf16 on a GPU) -> the GGUF
#: type it is compared with.
PEER_QUANT_FOR_SCHEME: dict[str | None, str] = {None: "F16", "int8": "Q8_0", "int4": "Q4_K_M"}
PEER_QUANTS = tuple(PEER_QUANT_FOR_SCHEME.values())
PEER_RESULTS_VERSION = 1


def _number(value: object, name: str, *, minimum: float = 0.0) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < minimum:
        raise InvalidInputError(f"peer results: {name} must be a finite number >= {minimum}, got {value!r}",
                                field=name)
    return float(value)


def _count(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInputError(f"peer results: {name} must be a positive integer, got {value!r}", field=name)
    return value


def _text(value: object, name: str) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidInputError(f"peer results: {name} must be a non-empty string, got {value!r}", field=name)
    return value


@dataclass(frozen=True)
class PeerRow:
    """One llama.cpp measurement at one concurrency.

    Attributes:
        tool: "llama-server" or "llama-batched-bench".
        quant: GGUF weight type, one of PEER_QUANTS.
        concurrency: requests in flight (server clients, or batched-bench's B).
        num_requests: requests measured.
        wall_s: wall time of the measurement.
        requests_per_s / output_tokens_per_s: completed requests and generated tokens per second.
        latency_ms_p50 / latency_ms_p90: per-request latency, from sending to the last token.
        ttft_ms_p50: time to the first token (None where it was not measured).
        command: the command that produced the row.
    """

    tool: str
    quant: str
    concurrency: int
    num_requests: int
    wall_s: float
    requests_per_s: float
    output_tokens_per_s: float
    latency_ms_p50: float
    latency_ms_p90: float
    ttft_ms_p50: float | None
    command: str

    def __post_init__(self) -> None:
        if self.tool not in PEER_TOOLS:
            raise InvalidInputError(f"peer results: tool must be one of {PEER_TOOLS}, got {self.tool!r}",
                                    field="tool")
        if self.quant not in PEER_QUANTS:
            raise InvalidInputError(f"peer results: quant must be one of {PEER_QUANTS}, got {self.quant!r}",
                                    field="quant")
        _count(self.concurrency, "concurrency")
        _count(self.num_requests, "num_requests")
        for name in ("wall_s", "requests_per_s", "output_tokens_per_s", "latency_ms_p50", "latency_ms_p90"):
            _number(getattr(self, name), name)
        if self.ttft_ms_p50 is not None:
            _number(self.ttft_ms_p50, "ttft_ms_p50")
        _text(self.command, "command")

    @classmethod
    def from_dict(cls, data: object) -> PeerRow:
        """A row of the JSON file; a missing or bad field raises InvalidInputError naming it."""
        if not isinstance(data, dict):
            raise InvalidInputError(f"peer results: each row must be an object, got {data!r}", field="rows")
        ttft = data.get("ttft_ms_p50")
        return cls(
            tool=_text(data.get("tool"), "tool"), quant=_text(data.get("quant"), "quant"),
            concurrency=_count(data.get("concurrency"), "concurrency"),
            num_requests=_count(data.get("num_requests"), "num_requests"),
            wall_s=_number(data.get("wall_s"), "wall_s"),
            requests_per_s=_number(data.get("requests_per_s"), "requests_per_s"),
            output_tokens_per_s=_number(data.get("output_tokens_per_s"), "output_tokens_per_s"),
            latency_ms_p50=_number(data.get("latency_ms_p50"), "latency_ms_p50"),
            latency_ms_p90=_number(data.get("latency_ms_p90"), "latency_ms_p90"),
            ttft_ms_p50=None if ttft is None else _number(ttft, "ttft_ms_p50"),
            command=_text(data.get("command"), "command"),
        )


@dataclass(frozen=True)
class PeerResults:
    """Every llama.cpp row of one peer run.

    Attributes:
        llamacpp_version: the pinned release, e.g. "llama-cpp-python 0.3.36 (llama.cpp 0c1e57098b)".
        device: where it ran, in words.
        workload: the lengths the rows used, in words.
        rows: the measurements.
    """

    llamacpp_version: str
    device: str
    workload: str
    rows: tuple[PeerRow, ...]

    def __post_init__(self) -> None:
        for name in ("llamacpp_version", "device", "workload"):
            _text(getattr(self, name), name)
        if not self.rows:
            raise InvalidInputError("peer results: rows must not be empty", field="rows")

    def to_dict(self) -> dict[str, Any]:
        return {"version": PEER_RESULTS_VERSION, **asdict(self)}

    def write_json(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n")

    @classmethod
    def from_dict(cls, data: object) -> PeerResults:
        if not isinstance(data, dict):
            raise InvalidInputError("peer results: the file must hold a JSON object", field="peer_results")
        if data.get("version") != PEER_RESULTS_VERSION:
            raise InvalidInputError(f"peer results: version must be {PEER_RESULTS_VERSION}, got "
                                    f"{data.get('version')!r}", field="version")
        rows = data.get("rows")
        if not isinstance(rows, list):
            raise InvalidInputError(f"peer results: rows must be a list, got {rows!r}", field="rows")
        return cls(_text(data.get("llamacpp_version"), "llamacpp_version"), _text(data.get("device"), "device"),
                   _text(data.get("workload"), "workload"), tuple(PeerRow.from_dict(row) for row in rows))


def read_peer_results(path: str | Path) -> PeerResults:
    """The peer rows of a run_peer.py JSON file; InvalidInputError naming the bad field."""
    try:
        data = json.loads(Path(path).read_text())
    except OSError as exc:
        raise InvalidInputError(f"cannot read peer results {path}: {exc}", field="peer_results") from exc
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"peer results {path} is not JSON: {exc}", field="peer_results") from exc
    return PeerResults.from_dict(data)


def parse_batched_bench_jsonl(text: str, quant: str, command: str) -> tuple[PeerRow, ...]:
    """Rows from `llama-batched-bench --output-format jsonl` (one JSON object per line among
    its log lines). All B sequences of a batch finish together at the batch's end, so each
    request's latency is the batch time and the time to first token is its prefill time."""
    rows = []
    for line in text.splitlines():
        if not line.startswith("{"):
            continue
        entry = json.loads(line)
        batch = _count(entry.get("pl"), "pl")
        total_s = _number(entry.get("t"), "t")
        rate = batch / max(total_s, 1e-9)
        rows.append(PeerRow(
            tool="llama-batched-bench", quant=quant, concurrency=batch, num_requests=batch, wall_s=total_s,
            requests_per_s=rate, output_tokens_per_s=rate * _count(entry.get("tg"), "tg"),
            latency_ms_p50=total_s * 1e3, latency_ms_p90=total_s * 1e3,
            ttft_ms_p50=_number(entry.get("t_pp"), "t_pp") * 1e3, command=command,
        ))
    if not rows:
        raise InvalidInputError("llama-batched-bench printed no JSONL rows", field="batched_bench_output")
    return tuple(rows)


@dataclass(frozen=True)
class HymtRow:
    """hymt's own figure at one concurrency, in the peer table's terms."""

    concurrency: int
    requests_per_s: float
    output_tokens_per_s: float
    latency_ms_p50: float | None
    source: str


def hymt_rows(latency: LatencyResult, closed_loop: tuple[ThroughputResult, ...],
              closed_loop_concurrency: tuple[int, ...]) -> tuple[HymtRow, ...]:
    """Concurrency 1 from the batch-1 latency run (one request after another), and each
    closed-loop run at its number of requests in flight."""
    rate = 1e3 / latency.total_ms_mean if latency.total_ms_mean > 0 else 0.0
    rows = [HymtRow(1, rate, rate * latency.output_tokens_mean, latency.total_ms_p50, "batch-1 latency run")]
    rows += [HymtRow(n, r.requests_per_s, r.output_tokens_per_s, r.latency_ms_p50, r.name)
             for n, r in zip(closed_loop_concurrency, closed_loop, strict=True)]
    return tuple(rows)


def format_peer_table(peer: PeerResults, hymt: tuple[HymtRow, ...], quantization: str | None,
                      dtype: str) -> list[str]:
    """hymt's row at each concurrency, and under it every peer row at that concurrency; the
    ratio is hymt's req/s over the peer's, for the GGUF type that matches hymt's weights
    (`quantization`, or unquantized `dtype` weights against F16)."""
    matching = PEER_QUANT_FOR_SCHEME.get(quantization)
    label = quantization or dtype
    by_concurrency = {row.concurrency: row for row in hymt}
    levels = sorted({row.concurrency for row in peer.rows} | set(by_concurrency))
    lines = [f"peer: {peer.llamacpp_version} on {peer.device}; {peer.workload}",
             f"('hymt is' = hymt {label} req/s / peer req/s, against the {matching or 'no GGUF type'} rows)",
             f"{'c':>4}  {'who':<40}  {'req/s':>9}  {'out tok/s':>10}  {'p50 ms':>8}  {'ttft ms':>8}  {'hymt is':>7}"]
    for level in levels:
        ours = by_concurrency.get(level)
        if ours is not None:
            lines.append(f"{level:>4}  {f'hymt {label} ({ours.source})':<40}  "
                         f"{ours.requests_per_s:>9.2f}  {ours.output_tokens_per_s:>10.0f}  "
                         f"{_ms(ours.latency_ms_p50):>8}  {'-':>8}  {'':>7}")
        peers = sorted((r for r in peer.rows if r.concurrency == level),
                       key=lambda r: (PEER_TOOLS.index(r.tool), PEER_QUANTS.index(r.quant)))
        for row in peers:
            ratio = (f"{ours.requests_per_s / row.requests_per_s:.2f}x"
                     if ours is not None and row.quant == matching and row.requests_per_s > 0 else "")
            lines.append(f"{level:>4}  {row.tool + ' ' + row.quant:<40}  {row.requests_per_s:>9.2f}  "
                         f"{row.output_tokens_per_s:>10.0f}  {row.latency_ms_p50:>8.1f}  "
                         f"{_ms(row.ttft_ms_p50):>8}  {ratio:>7}")
    return lines


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"
