"""FP8 checkpoints as llm-compressor / AngelSlim write them (compressed-tensors "float-quantized").

Tensors of one projection P (P = model.layers.N.self_attn.q_proj, ...):
  P.weight       float8_e4m3fn [N, K]
  P.weight_scale float32/bf16 [N, 1] or [N] (strategy "channel"), [1] or [] ("tensor")
  P.input_scale  static per-tensor activation scale ("FP8-static" W8A8), optional
w = weight * weight_scale: Fp8Linear's layout, so the values load unchanged.

Activations: Fp8Linear always quantizes activations per token at run time, so input_scale
tensors are consumed and not used. Per-token dynamic scales are at least as accurate as one
calibrated per-tensor scale (each token gets a scale fitted to its own range), and the
product is the same e4m3 GEMM.
KV cache scales (self_attn.k_scale / v_scale / q_scale, k_proj / v_proj.output_scale) are
consumed and ignored: the engine's fp8 KV cache is unscaled (logged once).
Layers the quantizer skipped ("ignore", or Tencent's "ignored_layers": exact module names,
or "re:" regexes) arrive as float weights and are quantized to fp8 per channel at load.
quant_method "fp8" (vLLM's serialized per-tensor format: same tensor names) loads the same
way, without block scales (weight_block_size).
"""
from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass

import torch

from hymt.engine.quant.fp8_weights import FP8_DTYPE
from hymt.engine.quant.prequantized import PrequantizedFormat, projection_parts
from hymt.engine.quant.schemes import SCHEMES
from hymt.errors import ModelLoadError

logger = logging.getLogger(__name__)

FORMATS = ("float-quantized", "naive-quantized")
WEIGHT_STRATEGIES = ("channel", "tensor")
_SUPPORTED = "fp8 (e4m3) weights, type 'float', num_bits 8, strategy 'channel' or 'tensor', format 'float-quantized'"
_KV_SCALES = ("k_scale", "v_scale", "q_scale")  # on self_attn
_CONSUMED = ("input_scale", "output_scale")  # on a projection; output_scale of k/v is the KV scale
_FLOAT_DTYPES = (torch.bfloat16, torch.float16, torch.float32)  # unquantized (ignored) layers
_MAX_SHOWN = 8


@dataclass(frozen=True)
class Fp8CheckpointConfig:
    """What the loader takes from the quantization_config.

    Attributes:
        ignore: module-name patterns the quantizer skipped (their weights are stored in float).
    """

    ignore: tuple[str, ...]


def compressed_tensors_format(qc: dict) -> PrequantizedFormat:
    """The format of a compressed-tensors (or vLLM "fp8") config; ModelLoadError if unsupported."""
    method = str(qc.get("quant_method", "")).lower()
    if method == "fp8":
        _check_vllm_fp8(qc)
    else:
        _check_compressed_tensors(qc)
    ignore = tuple(str(p) for p in [*(qc.get("ignore") or []), *(qc.get("ignored_layers") or [])])
    cfg = Fp8CheckpointConfig(ignore)
    return PrequantizedFormat("compressed-tensors", SCHEMES["fp8"], functools.partial(Fp8WeightHandler, config=cfg))


def _unsupported(what: str) -> ModelLoadError:
    return ModelLoadError(f"compressed-tensors checkpoint with {what} is not supported; supported: {_SUPPORTED}")


def _check_vllm_fp8(qc: dict) -> None:
    if qc.get("weight_block_size"):
        raise _unsupported(f"block scales (weight_block_size {qc['weight_block_size']})")
    fmt = str(qc.get("fmt", "e4m3")).lower()
    if fmt != "e4m3":
        raise _unsupported(f"fmt {fmt!r}")


def _check_compressed_tensors(qc: dict) -> None:
    groups = qc.get("config_groups")
    if not isinstance(groups, dict) or not groups:
        raise _unsupported("no config_groups")
    formats = {qc.get("format")} | {g.get("format") for g in groups.values() if isinstance(g, dict)}
    bad = sorted(str(f) for f in formats - {None, *FORMATS})
    if bad:
        raise _unsupported(f"format {', '.join(bad)}")
    sparsity = qc.get("sparsity_config") or {}
    if sparsity.get("format") not in (None, "dense"):
        raise _unsupported(f"sparsity format {sparsity.get('format')!r}")
    for name, group in groups.items():
        weights = (group or {}).get("weights") or {}
        kind, bits, strategy = weights.get("type"), weights.get("num_bits"), weights.get("strategy")
        if kind != "float" or bits != 8:
            raise _unsupported(f"config_groups.{name}.weights type {kind!r}, num_bits {bits!r}")
        if strategy not in WEIGHT_STRATEGIES:
            raise _unsupported(f"config_groups.{name}.weights strategy {strategy!r}")
        if weights.get("symmetric") is False:
            raise _unsupported(f"config_groups.{name}.weights symmetric false")
        acts = group.get("input_activations")
        if acts and (acts.get("type") != "float" or acts.get("num_bits") != 8):
            raise _unsupported(
                f"config_groups.{name}.input_activations type {acts.get('type')!r}, num_bits {acts.get('num_bits')!r}"
            )


def is_ignored(module_name: str, patterns: tuple[str, ...]) -> bool:
    """Whether a compressed-tensors ignore list names `module_name` (exact name or "re:" regex)."""
    for pattern in patterns:
        if pattern.startswith("re:"):
            if re.match(pattern[3:], module_name):
                return True
        elif module_name == pattern or module_name.endswith("." + pattern):
            return True
    return False


class Fp8WeightHandler:
    """WeightHandler (hymt.engine.loader) filling Fp8Linear rows from compressed-tensors tensors.

    A weight and its scale may arrive in either order (and from different shards): the
    first one waits in `pending` until the other is there.
    """

    def __init__(self, model, *, config: Fp8CheckpointConfig):
        self.config = config
        self.parts = projection_parts(model)
        self.attention = {prefix.rpartition(".")[0] for prefix in self.parts if ".self_attn." in prefix}
        self.pending: dict[str, dict[str, torch.Tensor]] = {}
        self.loaded: set[str] = set()
        self.float_loaded: list[str] = []
        self.kv_scales = 0

    def claim(self, name: str, get: Callable[[], torch.Tensor]) -> bool:
        prefix, _, piece = name.rpartition(".")
        if prefix in self.attention and piece in _KV_SCALES:
            self._kv_scale(name)
            return True
        if prefix not in self.parts:
            return False
        if piece in _CONSUMED:
            if piece == "output_scale":
                self._kv_scale(name)
            return True
        if piece == "weight_zero_point":
            if torch.count_nonzero(get()):
                raise _unsupported(f"a non-zero {name} (asymmetric weights)")
            return True
        if piece not in ("weight", "weight_scale"):
            return False
        if prefix in self.loaded or piece in self.pending.get(prefix, {}):
            raise ModelLoadError(f"checkpoint tensor {name} appears twice, or with a float weight")
        tensor = get()
        if piece == "weight" and tensor.dtype != FP8_DTYPE:
            self._load_float(prefix, tensor)
            return True
        pieces = self.pending.setdefault(prefix, {})
        pieces[piece] = tensor
        if "weight" in pieces and "weight_scale" in pieces:
            self._load(prefix, self.pending.pop(prefix))
        return True

    def finish(self) -> None:
        missing = []
        for prefix in self.parts:
            if prefix not in self.loaded:
                got = self.pending.get(prefix, {})
                missing += [f"{prefix}.{p}" for p in ("weight", "weight_scale") if p not in got]
        if missing:
            raise ModelLoadError(
                f"fp8 checkpoint is missing {len(missing)} tensors: {missing[:_MAX_SHOWN]}"
                f"{' ...' if len(missing) > _MAX_SHOWN else ''}"
            )
        if self.float_loaded:
            logger.info("%d projections stored unquantized (ignored by the checkpoint's quantizer) were quantized "
                        "to fp8 per channel at load: %s", len(self.float_loaded), self.float_loaded[:_MAX_SHOWN])

    def _kv_scale(self, name: str) -> None:
        if not self.kv_scales:
            logger.info("fp8 KV cache scales (%s, ...) are ignored: the engine's fp8 KV cache is unscaled", name)
        self.kv_scales += 1

    def _load(self, prefix: str, pieces: dict[str, torch.Tensor]) -> None:
        target = self.parts[prefix]
        rows = target.stop - target.start
        weight, scale = pieces["weight"], pieces["weight_scale"]
        _check_weight_shape(prefix, weight, rows, target.module.in_features)
        if scale.numel() not in (1, rows) or (scale.dim() == 2 and scale.shape[1] != 1) or scale.dim() > 2:
            raise _unsupported(
                f"{prefix}.weight_scale of shape {tuple(scale.shape)} (per-channel [{rows}, 1] / [{rows}] or "
                "per-tensor [1] expected; group and block scales are not)"
            )
        target.module.load_quantized_rows(target.start, weight, scale)
        self.loaded.add(prefix)

    def _load_float(self, prefix: str, weight: torch.Tensor) -> None:
        if weight.dtype not in _FLOAT_DTYPES:
            raise _unsupported(f"{prefix}.weight of dtype {str(weight.dtype).removeprefix('torch.')}")
        if prefix in self.pending:
            raise ModelLoadError(f"{prefix} has a float weight and a weight_scale; a quantized weight must be e4m3")
        target = self.parts[prefix]
        _check_weight_shape(prefix, weight, target.stop - target.start, target.module.in_features)
        if not is_ignored(prefix, self.config.ignore):
            logger.warning("%s.weight is stored in %s although the quantization_config does not ignore it; "
                           "quantizing it to fp8 at load", prefix, str(weight.dtype).removeprefix("torch."))
        target.module.load_float_rows(target.start, weight)
        self.float_loaded.append(prefix)
        self.loaded.add(prefix)


def _check_weight_shape(prefix: str, weight: torch.Tensor, rows: int, k: int) -> None:
    if tuple(weight.shape) != (rows, k):
        raise ModelLoadError(f"checkpoint tensor {prefix}.weight has shape {tuple(weight.shape)}, expected {(rows, k)}")
