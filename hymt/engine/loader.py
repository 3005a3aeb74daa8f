"""Load a Hunyuan dense model: safetensors -> device in the target dtype, or random weights.

No transformers model in between and no full host copy: each tensor is read with
safetensors.safe_open straight to the device, cast there, and copied into its slot of the
pre-allocated (fused, padded) parameters.
"""
from __future__ import annotations

import importlib.util
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import torch
from safetensors import safe_open

from hymt.engine.devices import resolve_device
from hymt.engine.dtypes import resolve_dtype
from hymt.engine.layers.linear import Linear
from hymt.engine.memory import param_bytes
from hymt.engine.network.hunyuan_config import HunyuanDenseConfig
from hymt.engine.network.hunyuan_dense import HunyuanDenseForCausalLM
from hymt.engine.network.hunyuan_weights import is_ignored, is_legacy, split_legacy, weight_targets
from hymt.errors import InvalidInputError, ModelLoadError

logger = logging.getLogger(__name__)

RANDOM_INIT_STD = 0.02  # HF's initializer_range: keeps random-weight activations finite in bf16
_MAX_NAMES_SHOWN = 8



class WeightHandler(Protocol):
    """Owner of a pre-quantized checkpoint's projection tensors (hymt.engine.quant.prequantized).

    `claim(name, get)` sees each tensor the float targets do not take and returns True when it
    consumed it (`get()` reads it); `finish()` raises ModelLoadError if a projection is incomplete.
    """

    def claim(self, name: str, get: Callable[[], torch.Tensor]) -> bool: ...

    def finish(self) -> None: ...


@dataclass(frozen=True)
class LoadStats:
    """What load_model did: seconds, bytes placed on the device, tensors read, source."""

    seconds: float
    weight_bytes: int
    num_tensors: int
    source: str


def load_model(
    checkpoint_or_config, device=None, dtype=None, *, quantization: str | None = None, random_weights: bool = False,
) -> HunyuanDenseForCausalLM:
    """Build the native model from a Checkpoint, a model dir (or hub id), or a config dict.

    device: None -> "cuda" when available, else "cpu". dtype: a torch dtype or a name
    (hymt.engine.dtypes; None / "auto": bfloat16 on CUDA, float32 on CPU). random_weights: real-shape random
    weights generated on the device (a config dict needs this). The result carries
    `model.load_stats` (LoadStats).
    """
    t0 = time.perf_counter()
    config, model_dir = _resolve_source(checkpoint_or_config, random_weights)
    cfg = HunyuanDenseConfig.from_dict(config)
    device = resolve_device(device)
    dtype = resolve_dtype(dtype, device)
    prequantized = None if random_weights else _prequantized_format(config)
    scheme = _quant_scheme(quantization, prequantized, device)
    linear = Linear if scheme is None else _quant().linear_factory(scheme)
    model = HunyuanDenseForCausalLM(cfg, device=device, dtype=dtype, linear=linear)
    if random_weights:
        num_tensors = init_random_weights(model)
        source = "random weights"
    else:
        handler = prequantized.handler(model) if prequantized is not None else None
        num_tensors = load_weights(model, model_dir, handler=handler)
        source = str(model_dir)
    if scheme is not None:
        _quant().finalize_layers(model)
    model.quantization = None if scheme is None else scheme.name
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    weight_bytes = param_bytes(model)
    model.load_stats = LoadStats(time.perf_counter() - t0, weight_bytes, num_tensors, source)
    logger.info(
        "loaded %s (%s%s, %.2f GB on %s) in %.2f s", source, str(dtype).removeprefix("torch."),
        f", {scheme.name} weights" if scheme else "", weight_bytes / 1e9, device, model.load_stats.seconds,
    )
    return model


def _resolve_source(obj, random_weights: bool) -> tuple[dict, Path | None]:
    """-> (config dict, model dir or None)."""
    if isinstance(obj, dict):
        if not random_weights:
            raise InvalidInputError(
                "a config dict has no weights: pass random_weights=True, or a checkpoint/model dir",
                field="checkpoint_or_config",
            )
        return obj, None
    if hasattr(obj, "path") and hasattr(obj, "config"):  # hymt.checkpoint.Checkpoint
        return dict(obj.config), Path(obj.path)
    if isinstance(obj, (str, Path)):
        model_dir = Path(obj)
        if not model_dir.is_dir():
            model_dir = _resolve_remote(str(obj))
        config_path = model_dir / "config.json"
        if not config_path.is_file():
            raise ModelLoadError(f"{model_dir} has no config.json; pass a Hunyuan model directory")
        try:
            return json.loads(config_path.read_text(encoding="utf-8")), model_dir
        except json.JSONDecodeError as e:
            raise ModelLoadError(f"{config_path} is not valid JSON: {e}") from e
    raise InvalidInputError(
        f"checkpoint_or_config must be a Checkpoint, a path or a config dict, got {type(obj).__name__}",
        field="checkpoint_or_config",
    )


def _resolve_remote(model: str) -> Path:
    if importlib.util.find_spec("hymt.checkpoint") is None:
        raise ModelLoadError(f"{model!r} is not a local directory; pass a local path (`--model /path/to/dir`)")
    from hymt.checkpoint import resolve_model_dir

    return Path(resolve_model_dir(model))


def safetensors_files(model_dir: Path) -> list[Path]:
    """The checkpoint's safetensors files: those of the shard index, or every *.safetensors."""
    index = model_dir / "model.safetensors.index.json"
    if index.is_file():
        weight_map = json.loads(index.read_text(encoding="utf-8")).get("weight_map", {})
        files = [model_dir / f for f in sorted(set(weight_map.values()))]
        absent = [f.name for f in files if not f.is_file()]
        if absent:
            raise ModelLoadError(f"{index.name} names shards missing from {model_dir}: {absent}")
        return files
    files = sorted(model_dir.glob("*.safetensors"))
    if not files:
        raise ModelLoadError(f"no *.safetensors files in {model_dir}")
    return files


def load_weights(model: HunyuanDenseForCausalLM, model_dir: Path, *, handler: WeightHandler | None = None) -> int:
    """Copy every checkpoint tensor into its target; returns the number read.

    With a `handler` (a pre-quantized checkpoint) the quantized projections' tensors go to it.
    Unknown names and missing targets raise ModelLoadError.
    """
    targets = weight_targets(model, quantized_weights=handler is None)
    loaded: set[str] = set()
    unknown: list[str] = []
    count = 0
    device = model.device
    for path in safetensors_files(model_dir):
        # safetensors wants "cuda:0", not a bare "cuda".
        dev = f"cuda:{device.index or 0}" if device.type == "cuda" else str(device)
        with safe_open(str(path), framework="pt", device=dev) as f:
            for name in f.keys():
                count += 1
                if name in targets:
                    targets[name].assign(name, f.get_tensor(name))
                    loaded.add(name)
                elif is_ignored(name, model):
                    continue
                elif is_legacy(name):
                    for part_name, part in split_legacy(name, f.get_tensor(name), model).items():
                        if part_name in targets:
                            targets[part_name].assign(name, part)
                            loaded.add(part_name)
                elif handler is None or not handler.claim(name, lambda n=name: f.get_tensor(n)):
                    unknown.append(name)
    _check_complete(model, targets, loaded, unknown, model_dir)
    if handler is not None:
        handler.finish()
    if model.config.padded_vocab_size > model.config.vocab_size:
        model.lm_head.weight[model.config.vocab_size :].zero_()
    return count


def _check_complete(model, targets: dict, loaded: set, unknown: list, model_dir: Path) -> None:
    if unknown:
        hint = ""
        if "qweight" in " ".join(unknown) or any(n.endswith("weight_scale") for n in unknown):
            hint = " (pre-quantized tensors, but config.json has no quantization_config hymt supports)"
        raise ModelLoadError(
            f"{model_dir}: {len(unknown)} checkpoint tensors the Hunyuan dense model does not use{hint}: "
            f"{unknown[:_MAX_NAMES_SHOWN]}{' ...' if len(unknown) > _MAX_NAMES_SHOWN else ''}"
        )
    missing = sorted(set(targets) - loaded)
    if missing:
        raise ModelLoadError(
            f"{model_dir}: {len(missing)} weights missing from the checkpoint: "
            f"{missing[:_MAX_NAMES_SHOWN]}{' ...' if len(missing) > _MAX_NAMES_SHOWN else ''}"
        )


@torch.no_grad()
def init_random_weights(model: HunyuanDenseForCausalLM, *, seed: int = 0) -> int:
    """Real-shape random weights on the device: N(0, 0.02) matrices, unit norms, zero biases.

    Quantized projections get the same float draws as a float model with the same seed, then
    quantize them: float and quantized models built with one seed hold the same weights.
    """
    gen = torch.Generator(device=model.device).manual_seed(seed)
    count = 0
    for module in model.modules():
        quantized = hasattr(module, "load_float_rows")
        for name, p in module.named_parameters(recurse=False):
            if quantized and name != "bias":
                continue
            count += 1
            if p.dim() == 1:
                p.fill_(1.0 if name.endswith("weight") else 0.0)  # norm weights / biases
            else:
                p.normal_(0.0, RANDOM_INIT_STD, generator=gen)  # in place, in the target dtype
        if quantized:
            count += 1
            w = torch.empty(module.out_features, module.in_features, device=model.device, dtype=model.dtype)
            module.load_float_rows(0, w.normal_(0.0, RANDOM_INIT_STD, generator=gen))
    model.lm_head.weight[model.config.vocab_size :].zero_()
    return count


def _quant():
    if importlib.util.find_spec("hymt.engine.quant") is None:
        raise InvalidInputError("quantization needs hymt.engine.quant, which this installation lacks; valid: None",
                                field="quantization")
    import hymt.engine.quant as quant

    return quant


def _prequantized_format(config: dict):
    if "quantization_config" not in config:
        return None
    from hymt.engine.quant.prequantized import detect_prequantized

    return detect_prequantized(config)


def _quant_scheme(quantization: str | None, prequantized, device: torch.device):
    """The scheme to build: the checkpoint's own when pre-quantized, else the one asked for."""
    if prequantized is not None:
        own = prequantized.scheme
        if quantization not in (None, own.name):
            raise InvalidInputError(
                f"the checkpoint is already quantized ({prequantized.name}, {own.name}); "
                f"quantization={quantization!r} cannot re-quantize it; valid: None or {own.name!r}",
                field="quantization",
            )
        supported = _quant().supported_schemes(device)
        if own.name not in supported:
            raise InvalidInputError(
                f"this {own.name} checkpoint cannot run on {device}; schemes supported there: "
                f"{', '.join(supported)}",
                field="quantization",
            )
        return own
    if quantization is None:
        return None
    return _quant().resolve_scheme(quantization, device)
