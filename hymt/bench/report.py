"""The compact text report `hymt bench` prints at the end (the summary to read after a GPU run)."""
from __future__ import annotations

from hymt.bench.peer import PeerResults, format_peer_table, hymt_rows
from hymt.bench.results import BenchResult, EnvInfo, LatencyResult, ServerLoadResult, ThroughputResult

GB = 1e9


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _gb(value: int | None) -> str:
    return "-" if value is None else f"{value / GB:.2f} GB"


def format_env(env: EnvInfo) -> list[str]:
    return [
        f"date {env.date} | {env.device_name} | python {env.python_version} | torch {env.torch_version} "
        f"(CUDA {env.cuda_version or '-'}) | transformers {env.transformers_version} | hymt {env.hymt_version}",
        f"command: {env.command}",
    ]


def _name_width(label: str, names) -> int:
    """Width of a table's first column: wide enough for its label and every row's name."""
    return max(len(label), *(len(name) for name in names))


def _throughput_rows(native: ThroughputResult, rows: tuple[ThroughputResult, ...], ratios: dict) -> list[str]:
    width = _name_width("throughput", (r.name for r in (native, *rows)))
    head = f"{'throughput':<{width}}  {'requests':>8}  {'wall s':>8}  {'req/s':>9}  {'out tok/s':>10}  " \
           f"{'total tok/s':>11}  {'native is':>9}  {'p50 / p90 ms':>15}"
    lines = [head]
    for r in (native, *rows):
        ratio = "" if r is native else (f"{ratios[r.name]:.1f}x" if r.name in ratios else "-")
        latency = "-" if r.latency_ms_p50 is None else f"{r.latency_ms_p50:.0f} / {r.latency_ms_p90:.0f}"
        lines.append(f"{r.name:<{width}}  {r.num_requests:>8}  {r.wall_s:>8.2f}  {r.requests_per_s:>9.2f}  "
                     f"{r.output_tokens_per_s:>10.0f}  {r.total_tokens_per_s:>11.0f}  {ratio:>9}  {latency:>15}")
    return lines


def _latency_rows(rows: list[LatencyResult]) -> list[str]:
    width = _name_width("batch-1 latency (ms)", (r.name for r in rows))
    lines = [f"{'batch-1 latency (ms)':<{width}}  {'requests':>8}  {'tokens':>6}  {'ttft p50':>8}  {'ttft p90':>8}  "
             f"{'total p50':>9}  {'total p90':>9}"]
    for r in rows:
        lines.append(f"{r.name:<{width}}  {r.num_requests:>8}  {r.output_tokens_mean:>6.0f}  {_ms(r.ttft_ms_p50):>8}  "
                     f"{_ms(r.ttft_ms_p90):>8}  {r.total_ms_p50:>9.1f}  {r.total_ms_p90:>9.1f}")
    return lines


def _memory_lines(result: BenchResult) -> list[str]:
    m = result.memory
    lines = [f"peak GPU memory (native runs): allocated {_gb(m.max_allocated_bytes)}, reserved "
             f"{_gb(m.max_reserved_bytes)} of {_gb(m.device_total_bytes)} on {m.device}"
             if m.device_total_bytes else f"peak GPU memory: n/a on {m.device}"]
    r = m.engine_report
    if r:
        lines.append(
            f"engine memory: budget {_gb(r.get('budget_bytes'))}, weights {_gb(r.get('weights_bytes'))}, "
            f"KV cache {_gb(r.get('kv_cache_bytes'))} "
            f"({r.get('num_kv_blocks')} blocks x {r.get('block_size')} tokens), "
            f"activations {_gb(r.get('activation_bytes'))}, CUDA graphs {_gb(r.get('cuda_graph_bytes'))} "
            f"(planned {_gb(r.get('cuda_graph_planned_bytes'))}), "
            f"peak {_gb(r.get('peak_bytes'))}"
        )
    return lines


def format_bench(result: BenchResult) -> str:
    """The end-of-run table: environment, workload, throughput with ratios, latency, memory."""
    w = result.options["workload"]
    lines = ["", "== hymt bench ==", *format_env(result.env),
             f"model: {result.model}; native engine ready in {result.load_s:.1f} s",
             f"workload: {w['num_requests']} requests, prompts {w['prompt_len_min']}-{w['prompt_len_max']} tokens, "
             f"{w['output_len']} answer tokens forced (ignore_eos), greedy, seed {w['seed']}", ""]
    extra = result.closed_loop
    lines += _throughput_rows(result.native, extra + result.baselines, result.ratios)
    lines.append("")
    lines += _latency_rows([result.native_latency] + ([result.baseline_latency] if result.baseline_latency else []))
    if "latency_p50" in result.ratios:
        lines.append(f"native batch-1 total latency is {result.ratios['latency_p50']:.1f}x lower (p50)")
    lines.append("")
    lines += _memory_lines(result)
    if result.peer is not None:
        lines += ["", *_peer_lines(result, result.peer)]
    steps = [f"  {r.name}: {r.steps.describe()}" for r in (result.native, *extra) if r.steps is not None]
    if steps:
        lines += ["", "engine steps (a CUDA graph, or eager: no graph covers the step):", *steps]
    phases = [f"  {r.name}: {r.phases.format()}" for r in (result.native, *extra) if r.phases is not None]
    if phases:
        lines += ["", "step phases (HYMT_PROFILE; under cpu, wait is the host idle on the device):", *phases]
    notes = [f"  {r.name}: {r.note}" for r in (result.native, *extra, *result.baselines) if r.note]
    if notes:
        lines += ["notes:", *notes]
    lines += [f"skipped: {s}" for s in result.skipped]
    return "\n".join(lines)


def _peer_lines(result: BenchResult, peer: PeerResults) -> list[str]:
    """llama.cpp's rows beside hymt's at each concurrency (batch 1, then each closed-loop run)."""
    ours = hymt_rows(result.native_latency, result.closed_loop, tuple(result.options["workload"]["closed_loop"]))
    return format_peer_table(peer, ours, result.options["engine"].get("quantization"), result.dtype)


def format_server_load(result: ServerLoadResult) -> str:
    lines = ["", "== hymt bench --server ==", *(format_env(result.env) if result.env else []),
             f"server {result.url}: {result.concurrency} concurrent clients in {result.processes} process(es), "
             f"{result.num_requests} requests"
             + (" (stopped by the time limit)" if result.timed_out else ""),
             f"completed {result.completed}, errors {result.errors}"
             + (f" {dict(result.error_kinds)}" if result.error_kinds else ""),
             f"wall {result.wall_s:.2f} s, {result.requests_per_s:.2f} req/s, "
             f"{result.completion_tokens / max(result.wall_s, 1e-9):.0f} completion tok/s",
             f"latency ms: p50 {_ms(result.latency_ms_p50)}, p90 {_ms(result.latency_ms_p90)}, "
             f"p99 {_ms(result.latency_ms_p99)}, mean {_ms(result.latency_ms_mean)}"]
    if result.completed and result.segments:
        lines.append(f"per request: {result.prompt_tokens / result.segments:.0f} prompt tokens per segment, "
                     f"{result.segments / result.completed:.2f} segments (engine requests); "
                     f"{result.segments / max(result.wall_s, 1e-9):.2f} engine requests/s")
    if result.completed and result.prompt_tokens and result.engine_prompt_tokens is not None:
        computed, sent = result.engine_prompt_tokens, result.prompt_tokens
        why = ("" if computed == sent else "; the prefix cache served the rest" if computed < sent
               else "; preempted requests were computed again")
        lines.append(f"prompt tokens computed by the engine: {computed} of {sent} ({computed / sent:.0%}{why})")
    if result.completed and result.server_cpu_s is not None:
        per = [f"HTTP process {1e3 * result.server_cpu_s / result.completed:.2f} ms "
               f"({result.server_cpu_s / max(result.wall_s, 1e-9):.0%} of a core)"]
        if result.engine_cpu_s is not None:
            per.append(f"engine process {1e3 * result.engine_cpu_s / result.completed:.2f} ms "
                       f"({result.engine_cpu_s / max(result.wall_s, 1e-9):.0%} of a core)")
        lines.append("server CPU per request: " + ", ".join(per))
    if result.engine_steps is not None:
        lines.append(f"engine steps during the run: {result.engine_steps.describe()}")
    return "\n".join(lines)


def format_quant_compare(result) -> str:
    """One row per scheme: weights, peak, throughput, batch-1 latency, logits error vs the reference."""
    first = result.runs[0].bench
    w = first.options["workload"]
    width = _name_width("scheme", (run.scheme for run in result.runs))
    lines = ["", "== hymt bench --compare-quantization ==", *format_env(result.env),
             f"model: {first.model}; workload: {w['num_requests']} requests, prompts {w['prompt_len_min']}-"
             f"{w['prompt_len_max']} tokens, {w['output_len']} answer tokens forced; logits over "
             f"{result.quality_prompts} prompts against {result.runs[0].scheme}", "",
             f"{'scheme':<{width}}  {'weights':>9}  {'KV':>9}  {'peak':>9}  {'req/s':>9}  {'vs ref':>6}  "
             f"{'b1 ttft':>7}  "
             f"{'b1 p50 ms':>9}  {'vs ref':>6}  {'rel L2':>7}  {'top-1':>6}"]
    ref = result.runs[0].bench
    for run in result.runs:
        b = run.bench
        r = b.memory.engine_report or {}
        peak = b.memory.max_reserved_bytes or r.get("peak_bytes")
        speed = b.native.requests_per_s / max(ref.native.requests_per_s, 1e-9)
        lat = ref.native_latency.total_ms_p50 / max(b.native_latency.total_ms_p50, 1e-9)
        err = run.logits
        lines.append(
            f"{run.scheme:<{width}}  {_gb(r.get('weights_bytes')):>9}  {_gb(r.get('kv_cache_bytes')):>9}  "
            f"{_gb(peak):>9}  "
            f"{b.native.requests_per_s:>9.1f}  {speed:>5.2f}x  {_ms(b.native_latency.ttft_ms_p50):>7}  "
            f"{b.native_latency.total_ms_p50:>9.1f}  {lat:>5.2f}x  "
            f"{'-' if err is None else f'{err.rel_l2:.4f}':>7}  {'-' if err is None else f'{err.top1 * 100:.1f}%':>6}"
        )
    lines.append("(vs ref: throughput ratio, and batch-1 speed-up = reference p50 / scheme p50)")
    for run in result.runs:
        lines.append(f"  {run.scheme}: " + "; ".join(_memory_lines(run.bench)))
    return "\n".join(lines)
