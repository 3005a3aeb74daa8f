"""transformers baselines on the native engine's weights: generate() at batch 1, left-padded
batches, and transformers' own continuous batching (`generate_batch` machinery).

Same weights: for a checkpoint, transformers loads the same directory; for random weights,
the native model's tensors are copied (HF names, CPU) before the native engine is closed, and
`from_pretrained(None, config=..., state_dict=...)` builds the HF model from them.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import torch

from hymt.bench.latency import run_latency
from hymt.bench.offline import run_offline, sync
from hymt.bench.results import LatencyResult, ThroughputResult
from hymt.bench.workload import Workload
from hymt.engine.backends.transformers_engine import TransformersEngine, load_hf_model

BATCH1 = "transformers generate, batch 1"
PADDED = "transformers generate, padded batches"
CONTINUOUS = "transformers continuous batching"


@dataclass(frozen=True)
class BaselineRuns:
    """What the transformers baselines measured, and what they could not run."""

    throughput: tuple[ThroughputResult, ...]
    latency: LatencyResult | None
    skipped: tuple[str, ...]


def native_weights_for_hf(native_model) -> dict[str, torch.Tensor] | None:
    """HF-named CPU copies of the native model's weights; None when they are not plain floats
    (quantized weights have no HF equivalent)."""
    from hymt.engine.network.hunyuan_weights import weight_targets

    try:
        targets = weight_targets(native_model)
    except AttributeError:  # quantized layers replace the fused float weights
        return None
    out = {}
    for name, target in targets.items():
        view = target.view
        if not view.is_floating_point() or view.element_size() < 2:
            return None
        out[name] = view.detach().to("cpu", copy=True)
    return out


def build_hf_model(
    model_config: dict, device: torch.device, dtype: torch.dtype, *, state_dict: dict | None = None,
    checkpoint_dir: str | Path | None = None,
) -> torch.nn.Module:
    """The transformers model: from `checkpoint_dir`, from `state_dict`, or random at the config's shape."""
    if checkpoint_dir is not None:
        return load_hf_model(checkpoint_dir, device=device, dtype=dtype)
    from transformers import HunYuanDenseV1Config, HunYuanDenseV1ForCausalLM

    config = HunYuanDenseV1Config.from_dict(model_config)
    if state_dict is not None:
        model = HunYuanDenseV1ForCausalLM.from_pretrained(None, config=config, state_dict=state_dict, dtype=dtype)
        return model.to(device).eval()
    with torch.device(device):
        model = HunYuanDenseV1ForCausalLM._from_config(config, dtype=dtype)
    return model.eval()


def run_baselines(
    hf_model: torch.nn.Module, workload: Workload, prompts: list[list[int]], *, batch1_requests: int,
    batch_size: int, log=print,
) -> BaselineRuns:
    """The three transformers runs on the workload's prompts. A failing run becomes a `skipped` line."""
    params = workload.sampling
    results: list[ThroughputResult] = []
    skipped: list[str] = []
    latency = None
    n1 = min(batch1_requests, len(prompts) - 1) if len(prompts) > 1 else 0
    try:
        if n1 < 1:
            raise ValueError("needs at least 2 requests (one warm-up, one timed)")
        engine = TransformersEngine(hf_model, stop_token_ids=(), batching="none")
        latency, thr = run_latency(engine, prompts[: n1 + 1], params, BATCH1)
        results.append(_with_note(thr, f"{thr.note}; measured on {n1} of {len(prompts)} requests"))
        log(f"  {BATCH1}: {thr.requests_per_s:.2f} req/s, total p50 {latency.total_ms_p50:.1f} ms")
    except Exception as exc:  # noqa: BLE001 - a baseline failure must not lose the native figures
        skipped.append(f"{BATCH1}: failed: {exc}")
    try:
        engine = TransformersEngine(hf_model, stop_token_ids=(), batching="padded", max_batch_size=batch_size)
        engine.generate(prompts[:batch_size], params.replace(max_tokens=2))  # warm-up at the batch shape
        thr, _ = run_offline(engine, prompts, params, f"{PADDED} of {batch_size}",
                             note="left-padded, one generate() call per batch, in arrival order")
        results.append(thr)
        log(f"  {thr.name}: {thr.requests_per_s:.2f} req/s")
    except Exception as exc:  # noqa: BLE001
        skipped.append(f"{PADDED} of {batch_size}: failed: {exc}")
    outcome = run_continuous_batching(hf_model, prompts, workload.output_len)
    if isinstance(outcome, ThroughputResult):
        results.append(outcome)
        log(f"  {CONTINUOUS}: {outcome.requests_per_s:.2f} req/s")
    else:
        skipped.append(outcome)
    return BaselineRuns(tuple(results), latency, tuple(skipped))


def _with_note(result: ThroughputResult, note: str) -> ThroughputResult:
    from dataclasses import replace

    return replace(result, note=note)


def continuous_batching_unavailable(model) -> str | None:
    """Why transformers' continuous batching cannot run here, or None when it can."""
    import transformers

    if not hasattr(model, "continuous_batching_context_manager"):
        return f"{CONTINUOUS}: not available in transformers {transformers.__version__}"
    return None


def run_continuous_batching(model, prompts: list[list[int]], output_len: int) -> ThroughputResult | str:
    """All prompts through transformers' continuous batching manager, timed after its warm-up
    (graph capture), from submission to the last result. Returns a reason string when it cannot run."""
    reason = continuous_batching_unavailable(model)
    if reason is not None:
        return reason
    from transformers import GenerationConfig

    # eos_token_id=-1 is transformers' "no eos": every answer runs to output_len, as ignore_eos does.
    gen = GenerationConfig(max_new_tokens=output_len, do_sample=False, eos_token_id=-1, pad_token_id=0)
    kwargs = {}
    try:
        from transformers.generation.continuous_batching.utils import WorkloadHints

        kwargs["workload_hints"] = WorkloadHints(
            max_prompt_length=max(len(p) for p in prompts), max_generated_length=output_len,
            num_requests=len(prompts),
        )
    except ImportError:
        pass
    on_cuda = next(model.parameters()).device.type == "cuda"
    if not on_cuda:
        kwargs["continuous_batching_config"] = _small_cpu_cache(prompts, output_len)
    try:
        # Its warm-up captures CUDA graphs; on CPU it only costs time.
        with model.continuous_batching_context_manager(generation_config=gen, block=True, timeout=30,
                                                       warmup=on_cuda, **kwargs) as manager:
            sync()
            start = time.perf_counter()
            ids = manager.add_requests(inputs=prompts, max_new_tokens=output_len)
            finished = _collect(manager, len(ids))
            sync()
            wall = time.perf_counter() - start
    except Exception as exc:  # noqa: BLE001 - report, keep the other figures
        return f"{CONTINUOUS}: failed: {type(exc).__name__}: {exc}"
    ok = [r for r in finished if not getattr(r, "error", None)]
    note = "timed after the manager's warm-up; paged|sdpa attention unless flash is installed"
    if len(ok) < len(prompts):
        note += f"; only {len(ok)} of {len(prompts)} requests finished"
    return ThroughputResult.measure(CONTINUOUS, len(ok), wall, sum(len(r.prompt_ids) for r in ok),
                                    sum(len(r.generated_tokens) for r in ok), note=note)


def _small_cpu_cache(prompts: list[list[int]], output_len: int):
    """On CPU transformers sizes its paged cache from host RAM (gigabytes, seconds per step for
    a tiny model); CUDA runs keep its own defaults, which is what users get."""
    from transformers.generation.configuration_utils import ContinuousBatchingConfig

    page = 16
    tokens = sum(len(p) + output_len for p in prompts)
    return ContinuousBatchingConfig(page_size=page, num_blocks=min(-(-tokens // page) + len(prompts), 4096),
                                    max_batch_tokens=512)


def _collect(manager, count: int) -> list:
    finished = []
    while len(finished) < count:
        result = manager.get_result(timeout=1)
        if result is None:
            if not manager.is_running():
                break
            continue
        if result.is_finished():
            finished.append(result)
    return finished
