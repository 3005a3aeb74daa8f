"""GPTQ int4 checkpoints as AutoGPTQ / GPTQModel write them (transformers' quant_method "gptq").

Tensors of one projection P (P = model.layers.N.self_attn.q_proj, ...):
  P.qweight int32 [K // 8, N]       8 4-bit values along K per int32, value j at bits 4j..4j+3
  P.qzeros  int32 [groups, N // 8]  packed along N the same way; checkpoint_format "gptq"
                                    (AutoGPTQ v1, the default) stores zero - 1, "gptq_v2"
                                    the zero itself
  P.scales  fp16  [groups, N]
  P.g_idx   int32 [K]               scale group of each input column: k // G, or a permuted
                                    assignment in act-order (desc_act) checkpoints
  P.bias    AutoGPTQ writes zeros for bias-free layers; accepted when all zero
w[n, k] = (q[k, n] - zero[g_idx[k], n]) * scale[g_idx[k], n]: the int4 layout of
hymt.engine.quant.int_weights transposed, so ordinary checkpoints are repacked exactly.
Act-order ones (or a group size the layer cannot use) are dequantized with g_idx and
re-quantized round-to-nearest in natural-order groups: a warning says it costs accuracy.
No other tensor is needed; `wf` (a shift table some old AutoGPTQ kernels keep as a module
buffer) is skipped if a checkpoint carries it. The Marlin/BitBLAS repacked formats are refused.
"""
from __future__ import annotations

import dataclasses
import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass

import torch

from hymt.engine.quant.int_weights import IntWeights, pack_int4
from hymt.engine.quant.prequantized import PrequantizedFormat, projection_parts
from hymt.engine.quant.schemes import SCHEMES
from hymt.errors import ModelLoadError

logger = logging.getLogger(__name__)

CHECKPOINT_FORMATS = ("gptq", "gptq_v2")
_REQUIRED = ("qweight", "qzeros", "scales")
_SKIPPED = ("wf",)
_NIBBLES = 8  # 4-bit values per int32
_MAX_SHOWN = 8


@dataclass(frozen=True)
class GptqConfig:
    """The quantization_config fields the loader needs.

    Attributes:
        group_size: input columns per scale group; -1 means one group over K.
        desc_act: act-order quantization (g_idx may be permuted; required then).
        sym: symmetric quantization (informational: the zeros are stored either way).
        zero_offset: 1 for the classic format (stored zero = zero - 1), 0 for gptq_v2.
    """

    group_size: int
    desc_act: bool
    sym: bool
    zero_offset: int


def gptq_format(qc: dict) -> PrequantizedFormat:
    """The format of a GPTQ quantization_config; ModelLoadError for what hymt cannot read."""
    cfg = parse_gptq_config(qc)
    # Group size 0 makes IntWeightLinear use one group over each layer's K (GPTQ's -1).
    scheme = dataclasses.replace(SCHEMES["int4"], group_size=max(cfg.group_size, 0))
    return PrequantizedFormat("gptq", scheme, functools.partial(GptqWeightHandler, config=cfg))


def parse_gptq_config(qc: dict) -> GptqConfig:
    bits = qc.get("bits", qc.get("w_bit"))
    if bits != 4:
        raise ModelLoadError(f"GPTQ quantization_config.bits {bits!r} is not supported; valid: 4")
    group_size = qc.get("group_size", -1)
    if not isinstance(group_size, int) or isinstance(group_size, bool) or (group_size <= 0 and group_size != -1):
        raise ModelLoadError(
            f"GPTQ quantization_config.group_size {group_size!r} is not valid; valid: a positive integer or -1"
        )
    fmt = str(qc.get("checkpoint_format") or "gptq").lower()
    if fmt not in CHECKPOINT_FORMATS:
        raise ModelLoadError(
            f"GPTQ quantization_config.checkpoint_format {fmt!r} is not supported; "
            f"valid: {', '.join(CHECKPOINT_FORMATS)}"
        )
    pack_dtype = str(qc.get("pack_dtype") or "int32").removeprefix("torch.")
    if pack_dtype != "int32":
        raise ModelLoadError(f"GPTQ quantization_config.pack_dtype {pack_dtype!r} is not supported; valid: int32")
    if qc.get("lm_head"):
        raise ModelLoadError("GPTQ checkpoints with a quantized lm_head are not supported; valid: lm_head false")
    if qc.get("dynamic"):
        raise ModelLoadError("GPTQ per-module overrides (quantization_config.dynamic) are not supported; valid: null")
    return GptqConfig(group_size, bool(qc.get("desc_act", False)), bool(qc.get("sym", True)),
                      1 if fmt == "gptq" else 0)


def unpack_int32_rows(packed: torch.Tensor) -> torch.Tensor:
    """int32 [R, C] with 8 nibbles per value along R -> int32 [8 R, C] in 0..15."""
    shifts = torch.arange(0, 32, 4, device=packed.device, dtype=torch.int32)  # [8]
    nibbles = (packed.unsqueeze(1) >> shifts.view(1, -1, 1)) & 0xF  # [R, 8, C]
    return nibbles.reshape(-1, packed.shape[1])


def unpack_int32_cols(packed: torch.Tensor) -> torch.Tensor:
    """int32 [R, C] with 8 nibbles per value along C -> int32 [R, 8 C] in 0..15."""
    shifts = torch.arange(0, 32, 4, device=packed.device, dtype=torch.int32)
    nibbles = (packed.unsqueeze(2) >> shifts.view(1, 1, -1)) & 0xF  # [R, C, 8]
    return nibbles.reshape(packed.shape[0], -1)


class GptqWeightHandler:
    """WeightHandler (hymt.engine.loader) filling IntWeightLinear rows from GPTQ tensors.

    The pieces of one projection are kept until all have arrived (they may come in any
    order, from any shard), then converted on the device they were read to and dropped.
    """

    def __init__(self, model, *, config: GptqConfig):
        self.config = config
        self.parts = projection_parts(model)
        self.pending: dict[str, dict[str, torch.Tensor]] = {}
        self.loaded: set[str] = set()
        self.requantized: list[str] = []

    def claim(self, name: str, get: Callable[[], torch.Tensor]) -> bool:
        prefix, _, piece = name.rpartition(".")
        if prefix not in self.parts:
            return False
        if piece in _SKIPPED:
            return True
        if piece == "bias":
            if torch.count_nonzero(get()):
                raise ModelLoadError(f"{name} is non-zero but the model config has no biases (attention_bias/mlp_bias)")
            return True
        if piece not in (*_REQUIRED, "g_idx"):
            return False
        if prefix in self.loaded or piece in self.pending.get(prefix, {}):
            raise ModelLoadError(f"checkpoint tensor {name} appears twice")
        pieces = self.pending.setdefault(prefix, {})
        pieces[piece] = get()
        if all(p in pieces for p in (*_REQUIRED, "g_idx")):
            self._load(prefix, self.pending.pop(prefix))
        return True

    def finish(self) -> None:
        if not self.config.desc_act:  # g_idx is optional when groups are in natural order
            for prefix in [p for p, got in self.pending.items() if all(k in got for k in _REQUIRED)]:
                self._load(prefix, self.pending.pop(prefix))
        needed = _REQUIRED + (("g_idx",) if self.config.desc_act else ())
        missing = [f"{prefix}.{piece}" for prefix in self.parts if prefix not in self.loaded
                   for piece in needed if piece not in self.pending.get(prefix, {})]
        if missing:
            raise ModelLoadError(
                f"GPTQ checkpoint is missing {len(missing)} tensors: {missing[:_MAX_SHOWN]}"
                f"{' ...' if len(missing) > _MAX_SHOWN else ''}"
            )
        if self.requantized:
            logger.warning(
                "%d GPTQ projections use act-order (or a group size the int4 layout cannot hold): dequantized "
                "and re-quantized round-to-nearest in natural-order groups, which costs some accuracy "
                "(first: %s)", len(self.requantized), self.requantized[0],
            )

    def _load(self, prefix: str, pieces: dict[str, torch.Tensor]) -> None:
        target = self.parts[prefix]
        module, rows, k = target.module, target.stop - target.start, target.module.in_features
        qweight, qzeros, scales = pieces["qweight"], pieces["qzeros"], pieces["scales"]
        group = min(self.config.group_size, k) if self.config.group_size > 0 else k
        groups = -(-k // group)
        _check_shape(prefix, "qweight", qweight, (k // _NIBBLES, rows))
        _check_shape(prefix, "scales", scales, (groups, rows))
        _check_shape(prefix, "qzeros", qzeros, (groups, rows // _NIBBLES))
        q = unpack_int32_rows(qweight.to(torch.int32))  # [K, N]
        # No wrap: like the GPTQ kernels, a classic-format nibble 15 means zero 16 (IntWeights
        # zeros are floats, so it is representable).
        zeros = unpack_int32_cols(qzeros.to(torch.int32)) + self.config.zero_offset  # [groups, N]
        g_idx = pieces.get("g_idx")
        natural = torch.arange(k, device=q.device, dtype=torch.int64) // group
        if g_idx is None:
            g_idx = natural
        else:
            _check_shape(prefix, "g_idx", g_idx, (k,))
            g_idx = g_idx.to(device=q.device, dtype=torch.int64)
            if int(g_idx.min()) < 0 or int(g_idx.max()) >= groups:
                raise ModelLoadError(f"{prefix}.g_idx has groups outside 0..{groups - 1}")
        if k % group == 0 and group == module.group_size and torch.equal(g_idx, natural):
            packed = pack_int4(q.t().contiguous().to(torch.uint8))  # [N, K // 2]
            module.load_quantized_rows(target.start, IntWeights(packed, scales.t(), zeros.t(), 4, group))
        else:
            w = (q.t().float() - zeros.t().float()[:, g_idx]) * scales.t().float()[:, g_idx]  # [N, K]
            module.load_float_rows(target.start, w)
            self.requantized.append(prefix)
        self.loaded.add(prefix)


def _check_shape(prefix: str, piece: str, tensor: torch.Tensor, expected: tuple) -> None:
    if tuple(tensor.shape) != tuple(expected):
        raise ModelLoadError(
            f"GPTQ tensor {prefix}.{piece} has shape {tuple(tensor.shape)}, expected {tuple(expected)}"
        )
