"""BenchOptions: what one offline `hymt bench` run measures, validated once."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hymt.bench.workload import Workload
from hymt.engine.config import EngineConfig
from hymt.errors import InvalidInputError

BASELINE_CHOICES = ("none", "transformers")


@dataclass(frozen=True)
class BenchOptions:
    """Options of an offline benchmark run.

    Attributes:
        model: hub id or local checkpoint dir; with `random_weights`, only its config.json
            (or, for a hub id naming a family, that family's real shape) is used.
        random_weights: real-shape random weights generated on the device.
        family: model family whose real shape `random_weights` uses when `model` is None.
        workload: requests, prompt/answer lengths, batch-1 request count, seed.
        device / dtype: None picks CUDA + bfloat16 when present, else CPU + float32.
        engine: native-engine knobs that were set on the command line (EngineConfig fields).
        baseline: "none" or "transformers" (generate() batch 1 and padded, continuous batching).
        baseline_requests: requests of the batch-1 generate() run (a subset; it is slow).
        baseline_batch_size: batch size of the padded generate() run.
        warmup_requests: requests of the untimed native warm-up run before the timed one.
    """

    model: str | None = None
    random_weights: bool = False
    family: str | None = None
    workload: Workload = field(default_factory=Workload)
    device: str | None = None
    dtype: str | None = None
    engine: dict[str, Any] = field(default_factory=dict)
    baseline: str = "none"
    baseline_requests: int = 20
    baseline_batch_size: int = 64
    warmup_requests: int = 256

    def __post_init__(self) -> None:
        if self.model is None and not (self.random_weights and self.family):
            raise InvalidInputError("pass --model M, or --random-weights with --family F", field="model")
        if self.family and not self.random_weights:
            raise InvalidInputError("--family only applies with --random-weights", field="family")
        if self.baseline not in BASELINE_CHOICES:
            raise InvalidInputError(f"baseline must be one of {BASELINE_CHOICES}, got {self.baseline!r}",
                                    field="baseline")
        for name in ("baseline_requests", "baseline_batch_size"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise InvalidInputError(f"{name} must be a positive integer, got {value!r}", field=name)
        if not isinstance(self.warmup_requests, int) or self.warmup_requests < 0:
            raise InvalidInputError(f"warmup_requests must be >= 0, got {self.warmup_requests!r}",
                                    field="warmup_requests")
        self.engine_config()  # validates the engine knobs now, with EngineConfig's messages

    def engine_config(self) -> EngineConfig:
        return EngineConfig(**self.engine)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def random_weights_config(options: BenchOptions) -> tuple[dict, str]:
    """(config.json dict, description) for a random-weights run."""
    local = Path(options.model) / "config.json" if options.model else None
    if not options.family and local is not None and local.is_file():
        return json.loads(local.read_text()), f"random weights, shape of {options.model}"
    from hymt.testing import real_shape_config

    if options.family:
        return real_shape_config(options.family), f"random weights, {options.family} shape"
    name = options.model.rsplit("/", 1)[-1]
    try:
        return real_shape_config(name), f"random weights, {name} shape"
    except (KeyError, ValueError) as exc:
        raise InvalidInputError(
            f"--random-weights needs a local checkpoint dir or a model family name, got {options.model!r} "
            "(or pass --family)", field="model",
        ) from exc
