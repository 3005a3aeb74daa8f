"""`hymt bench --compare-quantization bf16,int8,int4,fp8`: every scheme in one run.

For each scheme, on the same weights (one random seed, or one checkpoint) and in one process:
  1. quality: teacher-forced logits over `quality_prompts` prompts against the first
     (unquantized) scheme's, as relative L2 and top-1 agreement (logits_error.py);
  2. speed and memory: a full offline `hymt bench` run (throughput, batch-1 latency, peak).
The quality pass loads the model alone, before the engine, so its buffers never sit inside
the engine's memory budget.
"""
from __future__ import annotations

import gc
import json
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import torch

from hymt.bench.logits_error import LogitsError, logits_error, teacher_forced_logits
from hymt.bench.options import BenchOptions, random_weights_config
from hymt.bench.results import BenchResult, EnvInfo
from hymt.engine.config import QUANTIZATION_CHOICES
from hymt.errors import InvalidInputError

#: Names meaning "no quantization" (the reference scheme).
UNQUANTIZED = ("bf16", "none", "float")
VALID_SCHEMES = (*UNQUANTIZED, *QUANTIZATION_CHOICES[1:])


@dataclass(frozen=True)
class SchemeRun:
    """One scheme's figures.

    Attributes:
        scheme: "bf16" for the unquantized reference, else the quantization name.
        bench: the offline bench run with this scheme.
        logits: error against the reference's logits (None for the reference itself).
        quality_load_s: seconds to load the model for the quality pass.
    """

    scheme: str
    bench: BenchResult
    logits: LogitsError | None
    quality_load_s: float


@dataclass(frozen=True)
class QuantCompareResult:
    """All schemes of one `--compare-quantization` run; the first is the reference."""

    env: EnvInfo
    quality_prompts: int
    runs: tuple[SchemeRun, ...]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def write_json(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2, default=str) + "\n")


def parse_schemes(text: str) -> tuple[str, ...]:
    """"bf16,int8,int4" -> ("bf16", "int8", "int4"); the reference is put first if missing."""
    names = tuple(n.strip().lower() for n in text.split(",") if n.strip())
    bad = [n for n in names if n not in VALID_SCHEMES]
    if bad or not names:
        raise InvalidInputError(
            f"--compare-quantization got {bad or text!r}; valid: a comma list of {', '.join(VALID_SCHEMES)}",
            field="compare_quantization",
        )
    names = tuple("bf16" if n in UNQUANTIZED else n for n in names)
    rest = tuple(dict.fromkeys(n for n in names if n != "bf16"))
    return ("bf16", *rest)


def run_quant_compare(options: BenchOptions, schemes: tuple[str, ...], *, quality_prompts: int = 64,
                      command: str = "", progress=None) -> QuantCompareResult:
    """Run each scheme (quality pass, then the offline bench) and collect the figures."""
    from hymt.bench.runner import env_info, run_bench
    from hymt.engine.devices import resolve_device
    from hymt.engine.dtypes import resolve_dtype

    say = progress or (lambda msg: print(msg, file=sys.stderr, flush=True))
    device = resolve_device(options.device)
    dtype = resolve_dtype(options.dtype, device)
    source, vocab = _model_source(options)
    prompts = options.workload.prompts(vocab)[:quality_prompts]
    reference: list[torch.Tensor] | None = None
    runs = []
    for scheme in schemes:
        quantization = None if scheme == "bf16" else scheme
        t0 = time.perf_counter()
        logits = _quality_logits(source, options, device, dtype, quantization, prompts)
        load_s = time.perf_counter() - t0
        error = None
        if reference is None:
            reference = logits
        else:
            error = logits_error(logits, reference)
            say(f"{scheme}: logits rel L2 {error.rel_l2:.4f}, top-1 {error.top1 * 100:.1f}% "
                f"over {error.positions} positions")
        del logits
        engine = {k: v for k, v in options.engine.items() if k != "quantization"}
        if quantization:
            engine["quantization"] = quantization
        bench = run_bench(replace(options, engine=engine, baseline="none"), command=command, progress=say)
        runs.append(SchemeRun(scheme, bench, error, load_s))
        _free(device)
    return QuantCompareResult(env_info(command, device), len(prompts), tuple(runs))


def _model_source(options: BenchOptions):
    if options.random_weights:
        config, _ = random_weights_config(options)
        return config, int(config["vocab_size"])
    from hymt.checkpoint import load_checkpoint

    checkpoint = load_checkpoint(options.model)
    return checkpoint, int(checkpoint.config["vocab_size"])


def _quality_logits(source, options, device, dtype, quantization, prompts) -> list[torch.Tensor]:
    from hymt.engine.loader import load_model

    model = load_model(source, device, dtype, quantization=quantization, random_weights=options.random_weights)
    try:
        return teacher_forced_logits(model, prompts)
    finally:
        del model
        _free(device)


def _free(device: torch.device) -> None:
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)
