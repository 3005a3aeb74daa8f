"""One offline `hymt bench` run: native throughput, batch-1 latency, memory, baselines."""
from __future__ import annotations

import gc
import platform
import sys
import time
from datetime import UTC, datetime

import torch

from hymt.bench.baselines import BaselineRuns, build_hf_model, native_weights_for_hf, run_baselines
from hymt.bench.latency import run_latency
from hymt.bench.offline import run_closed_loop, run_offline
from hymt.bench.options import BenchOptions, random_weights_config
from hymt.bench.results import BenchResult, EnvInfo, MemoryResult


def env_info(command: str, device: torch.device | None) -> EnvInfo:
    """Command, date, versions; device None = a client-only run (server load)."""
    import transformers

    import hymt

    if device is None:
        name = f"client only ({platform.node()})"
    elif device.type == "cuda":
        name = torch.cuda.get_device_name(device)
    else:
        name = f"CPU ({platform.processor() or platform.machine()}, {torch.get_num_threads()} threads)"
    return EnvInfo(
        command=command, date=datetime.now(UTC).isoformat(timespec="seconds"), device_name=name,
        python_version=platform.python_version(), torch_version=torch.__version__,
        transformers_version=transformers.__version__, cuda_version=torch.version.cuda,
        hymt_version=getattr(hymt, "__version__", "unknown"),
    )


def _source(options: BenchOptions):
    """(engine source, config.json dict, description, checkpoint dir or None)."""
    if options.random_weights:
        config, description = random_weights_config(options)
        return config, config, description, None
    from hymt.checkpoint import load_checkpoint

    checkpoint = load_checkpoint(options.model)
    return checkpoint, checkpoint.config, str(checkpoint.path), checkpoint.path


def _memory(engine, device: torch.device) -> MemoryResult:
    report = engine.memory_report()
    report_dict = report.to_dict() if report is not None else None
    if device.type != "cuda":
        return MemoryResult(str(device), 0, 0, 0, report_dict)
    return MemoryResult(
        str(device), int(torch.cuda.max_memory_allocated(device)), int(torch.cuda.max_memory_reserved(device)),
        int(torch.cuda.get_device_properties(device).total_memory), report_dict,
    )


def run_bench(options: BenchOptions, *, command: str = "", progress=None) -> BenchResult:
    """Run every measurement `options` asks for, in one process, and return the results."""
    from hymt.engine.devices import resolve_device
    from hymt.engine.dtypes import resolve_dtype
    from hymt.engine.native_engine import NativeEngine

    say = progress or (lambda msg: print(msg, file=sys.stderr, flush=True))
    device = resolve_device(options.device)
    dtype = resolve_dtype(options.dtype, device)
    source, model_config, description, checkpoint_dir = _source(options)
    workload = options.workload
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    start = time.perf_counter()
    engine = NativeEngine(source, options.engine_config(), device=device, dtype=dtype,
                          random_weights=options.random_weights)
    load_s = time.perf_counter() - start
    say(f"native engine ready in {load_s:.1f} s ({description}, {str(dtype).removeprefix('torch.')} on {device})")
    vocab = int(model_config["vocab_size"])
    prompts = workload.prompts(vocab)
    params = workload.sampling
    if options.warmup_requests:
        engine.generate(workload.warmup_prompts(vocab, options.warmup_requests), params)
    native, _ = run_offline(engine, prompts, params, "native",
                            note=f"all submitted at once, after a {options.warmup_requests}-request warm-up")
    say(f"native: {native.requests_per_s:.1f} req/s, {native.output_tokens_per_s:.0f} output tok/s")
    closed = []
    for index, in_flight in enumerate(workload.closed_loop):
        run = run_closed_loop(engine, workload.closed_loop_prompts(vocab, index), params, in_flight,
                              f"native, {in_flight} in flight")
        say(f"{run.name}: {run.requests_per_s:.1f} req/s")
        closed.append(run)
    native_latency, _ = run_latency(engine, workload.latency_prompts(vocab), params, "native")
    say(f"native batch 1: total p50 {native_latency.total_ms_p50:.1f} ms")
    memory = _memory(engine, device)
    runs = BaselineRuns((), None, ())
    if options.baseline == "transformers":
        runs = _baselines(options, engine, model_config, checkpoint_dir, prompts, device, dtype, say)
    else:
        engine.close()
    ratios = {r.name: native.requests_per_s / r.requests_per_s for r in runs.throughput if r.requests_per_s > 0}
    if runs.latency is not None:
        ratios["latency_p50"] = runs.latency.total_ms_p50 / native_latency.total_ms_p50
    return BenchResult(
        env=env_info(command, device), options=options.to_dict(), model=description, load_s=load_s, native=native,
        native_latency=native_latency, memory=memory, baselines=runs.throughput, baseline_latency=runs.latency,
        skipped=runs.skipped, ratios=ratios, closed_loop=tuple(closed), dtype=str(dtype).removeprefix("torch."),
    )


def _baselines(options, engine, model_config, checkpoint_dir, prompts, device, dtype, say) -> BaselineRuns:
    """Close the native engine (its KV cache would starve transformers), then build the HF model
    on the same weights and run the baselines."""
    note = ()
    weights = None
    if checkpoint_dir is None:
        weights = native_weights_for_hf(engine.runner.model)
        if weights is None:
            note = ("transformers baselines use separate random weights (the native weights are quantized)",)
    engine.close()
    del engine
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()
    say("loading the transformers model on the same weights ...")
    try:
        hf = build_hf_model(model_config, device, dtype, state_dict=weights, checkpoint_dir=checkpoint_dir)
    except Exception as exc:  # noqa: BLE001 - e.g. a pre-quantized checkpoint transformers cannot read
        return BaselineRuns((), None, note + (f"transformers baselines: could not build the model: {exc}",))
    del weights
    runs = run_baselines(hf, options.workload, prompts, batch1_requests=options.baseline_requests,
                         batch_size=options.baseline_batch_size, log=say)
    return BaselineRuns(runs.throughput, runs.latency, note + runs.skipped)
