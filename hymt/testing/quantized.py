"""Pre-quantized tiny checkpoints, laid out as the published releases are.

WRITERS[name](config, state) -> (config, state) (the contract of
tiny_checkpoint._quantized_writers) replaces every q/k/v/o/gate/up/down weight by its packed
tensors and adds the release's `quantization_config`:
  gptq-int4            GPTQ as AutoGPTQ writes it: sym, classic format (stored zero - 1)
  gptq-int4-v2         GPTQModel's gptq_v2 format (exact zeros), asymmetric
  gptq-int4-act-order  desc_act with a permuted g_idx
  fp8                  compressed-tensors float-quantized, per-channel scales, static input
                       scales, k/v_proj.output_scale KV scales, Tencent's "ignored_layers"
  fp8-per-tensor       per-tensor scales, self_attn.k/v_scale, llm-compressor's "ignore" with a
                       "re:" entry that keeps layer 1's down_proj in float
Weights are quantized round-to-nearest from per-group (per-row) min/max, not by a GPTQ
solver: loaders are tested on the format, not on calibration quality.
`writer.dequantized(state)` gives the float weights each stored projection stands for.
"""
from __future__ import annotations

import re
import zlib
from dataclasses import dataclass

import torch

PROJECTIONS = ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
               "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj")
#: Group size of the tiny GPTQ checkpoints: divides the tiny widths (64 and 128).
TINY_GROUP_SIZE = 32
_INT4_MAX = 15
_FP8_MAX = 448.0
_NIBBLES = 8
_PROJECTION = re.compile(r"^model\.layers\.\d+\.(" + "|".join(re.escape(p) for p in PROJECTIONS) + r")\.weight$")


def projection_names(state: dict) -> list[str]:
    """The state's quantizable projection weights (q/k/v/o/gate/up/down of every layer)."""
    return [name for name in state if _PROJECTION.match(name)]


@dataclass(frozen=True)
class GptqWeights:
    """One GPTQ-quantized weight before packing.

    Attributes:
        q: int64 [N, K] in 0..15.
        zeros: int64 [N, groups] in 0..15.
        scales: float16 [N, groups].
        g_idx: int64 [K], the group of each input column.
    """

    q: torch.Tensor
    zeros: torch.Tensor
    scales: torch.Tensor
    g_idx: torch.Tensor

    def dequantize(self) -> torch.Tensor:
        """float32 [N, K]: (q - zero[g_idx]) * scale[g_idx]."""
        return (self.q - self.zeros[:, self.g_idx]).float() * self.scales.float()[:, self.g_idx]


def natural_g_idx(k: int, group_size: int) -> torch.Tensor:
    return torch.arange(k) // group_size


def act_order_g_idx(k: int, group_size: int, seed: int) -> torch.Tensor:
    """An act-order assignment: columns taken in a random order, G at a time, form the groups."""
    order = torch.randperm(k, generator=torch.Generator().manual_seed(seed))
    g_idx = torch.empty(k, dtype=torch.int64)
    g_idx[order] = torch.arange(k) // group_size
    return g_idx


def gptq_quantize(w: torch.Tensor, g_idx: torch.Tensor, *, sym: bool) -> GptqWeights:
    """Round-to-nearest int4 with GPTQ's quantizer grid: per (row, group) min/max including 0."""
    w = w.float()
    n = w.shape[0]
    groups = int(g_idx.max()) + 1
    order = torch.argsort(g_idx, stable=True)
    grouped = w[:, order].reshape(n, groups, -1)  # [N, groups, G]: each group's columns
    lo = grouped.amin(dim=-1).clamp(max=0.0)
    hi = grouped.amax(dim=-1).clamp(min=0.0)
    if sym:
        hi = torch.maximum(-lo, hi)
        lo = torch.where(lo < 0, -hi, lo)
    flat = (lo == 0) & (hi == 0)
    lo, hi = lo.masked_fill(flat, -1.0), hi.masked_fill(flat, 1.0)
    scales = ((hi - lo) / _INT4_MAX).to(torch.float16)  # stored in fp16: round against it
    s = scales.float()
    if sym:
        zeros = torch.full_like(s, (_INT4_MAX + 1) // 2, dtype=torch.int64)
    else:
        zeros = torch.round(-lo / s).clamp(0, _INT4_MAX).to(torch.int64)
    q = torch.round(w / s[:, g_idx]) + zeros[:, g_idx]
    return GptqWeights(q.clamp(0, _INT4_MAX).to(torch.int64), zeros, scales, g_idx)


def _to_int32(values: torch.Tensor) -> torch.Tensor:
    """int64 holding 32-bit patterns -> int32 with the same bits."""
    return torch.where(values >= 2**31, values - 2**32, values).to(torch.int32)


def pack_rows(q: torch.Tensor) -> torch.Tensor:
    """int64 [8 R, C] in 0..15 -> int32 [R, C], value j of each 8 at bits 4j..4j+3."""
    nibbles = q.reshape(-1, _NIBBLES, q.shape[1])  # [R, 8, C]
    shifts = (torch.arange(_NIBBLES, dtype=torch.int64) * 4).view(1, -1, 1)
    return _to_int32((nibbles << shifts).sum(dim=1))


def pack_gptq(weights: GptqWeights, checkpoint_format: str) -> dict[str, torch.Tensor]:
    """-> {qweight, qzeros, scales, g_idx} as a GPTQ checkpoint stores them."""
    stored_zeros = weights.zeros  # [N, groups]
    if checkpoint_format == "gptq":  # the classic format stores zero - 1: zero 0 has no encoding
        if bool((weights.zeros == 0).any()):
            raise ValueError("checkpoint_format 'gptq' cannot store zero point 0; use sym=True or 'gptq_v2'")
        stored_zeros = weights.zeros - 1
    return {
        "qweight": pack_rows(weights.q.t().contiguous()),  # [K // 8, N]
        "qzeros": pack_rows(stored_zeros.contiguous()).t().contiguous(),  # [groups, N // 8]
        "scales": weights.scales.t().contiguous(),  # [groups, N]
        "g_idx": weights.g_idx.to(torch.int32),
    }


@dataclass(frozen=True)
class GptqWriter:
    """Writes a GPTQ int4 checkpoint (see the module docstring for the variants).

    Attributes:
        group_size: input columns per scale group, -1 for one group over K.
        sym: symmetric grid (zero point 8) instead of per-group min/max.
        desc_act: act-order: a permuted g_idx.
        checkpoint_format: "gptq" (stored zero - 1) or "gptq_v2" (exact zeros).
    """

    group_size: int = TINY_GROUP_SIZE
    sym: bool = True
    desc_act: bool = False
    checkpoint_format: str = "gptq"

    def quantize(self, name: str, w: torch.Tensor) -> GptqWeights:
        k = w.shape[1]
        group = k if self.group_size == -1 else self.group_size  # -1: one group over K
        seed = zlib.crc32(name.encode())  # a fixed permutation per tensor
        g_idx = act_order_g_idx(k, group, seed) if self.desc_act else natural_g_idx(k, group)
        return gptq_quantize(w, g_idx, sym=self.sym)

    def dequantized(self, state: dict) -> dict[str, torch.Tensor]:
        return {name: self.quantize(name, state[name]).dequantize() for name in projection_names(state)}

    def quantization_config(self) -> dict:
        return {
            "quant_method": "gptq", "bits": 4, "group_size": self.group_size, "desc_act": self.desc_act,
            "sym": self.sym, "static_groups": False, "true_sequential": True, "damp_percent": 0.01,
            "checkpoint_format": self.checkpoint_format, "pack_dtype": "int32", "lm_head": False,
            "meta": {"quantizer": ["hymt.testing round-to-nearest"]},
        }

    def __call__(self, config: dict, state: dict) -> tuple[dict, dict]:
        out = dict(state)
        for name in projection_names(state):
            prefix = name.removesuffix(".weight")
            packed = pack_gptq(self.quantize(name, out.pop(name)), self.checkpoint_format)
            out |= {f"{prefix}.{piece}": t for piece, t in packed.items()}
        return config | {"quantization_config": self.quantization_config()}, out


def fp8_quantize(w: torch.Tensor, *, per_tensor: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """w [N, K] -> (e4m3 [N, K], float32 scale [N, 1] per channel or [1] per tensor), amax / 448."""
    w = w.float()
    amax = w.abs().amax().reshape(1) if per_tensor else w.abs().amax(dim=1, keepdim=True)
    scale = (amax / _FP8_MAX).clamp_min(1e-12)
    q = (w / scale).clamp(-_FP8_MAX, _FP8_MAX).to(torch.float8_e4m3fn)
    return q, scale


def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    return any(re.match(p[3:], name) if p.startswith("re:") else name == p for p in patterns)


@dataclass(frozen=True)
class Fp8Writer:
    """Writes a compressed-tensors fp8 checkpoint (see the module docstring for the variants).

    Attributes:
        per_tensor: strategy "tensor" instead of "channel".
        ignore: module names / "re:" patterns left in float (they must include "lm_head").
        ignore_key: "ignored_layers" (Tencent's configs) or "ignore" (llm-compressor's).
        kv_scales_on_attention: self_attn.k_scale / v_scale instead of k/v_proj.output_scale.
    """

    per_tensor: bool = False
    ignore: tuple[str, ...] = ("lm_head",)
    ignore_key: str = "ignored_layers"
    kv_scales_on_attention: bool = False

    def kept_float(self, name: str) -> bool:
        """Whether projection weight `name` stays unquantized in the checkpoint."""
        return _matches(name.removesuffix(".weight"), self.ignore)

    def dequantized(self, state: dict) -> dict[str, torch.Tensor]:
        out = {}
        for name in projection_names(state):
            if self.kept_float(name):
                out[name] = state[name].float()
            else:
                q, scale = fp8_quantize(state[name], per_tensor=self.per_tensor)
                out[name] = q.float() * scale
        return out

    def quantization_config(self) -> dict:
        strategy = "tensor" if self.per_tensor else "channel"
        args = dict(num_bits=8, type="float", symmetric=True, group_size=None, block_structure=None,
                    observer="minmax", actorder=None)
        return {
            "quant_method": "compressed-tensors", "format": "float-quantized", "quantization_status": "compressed",
            "config_groups": {"group_0": {
                "targets": ["Linear"], "format": "float-quantized",
                "weights": {**args, "strategy": strategy, "dynamic": False},
                "input_activations": {**args, "strategy": "tensor", "dynamic": False},
                "output_activations": None,
            }},
            "kv_cache_scheme": {**args, "strategy": "tensor", "dynamic": False},
            self.ignore_key: list(self.ignore), "sparsity_config": {}, "version": "0.11.0",
        }

    def __call__(self, config: dict, state: dict) -> tuple[dict, dict]:
        out = dict(state)
        for name in projection_names(state):
            if self.kept_float(name):
                continue
            prefix = name.removesuffix(".weight")
            q, scale = fp8_quantize(out.pop(name), per_tensor=self.per_tensor)
            # A static activation scale as calibration would produce (loaders ignore it).
            out |= {f"{prefix}.weight": q, f"{prefix}.weight_scale": scale,
                    f"{prefix}.input_scale": torch.tensor([0.5 / _FP8_MAX])}
            if prefix.endswith(("k_proj", "v_proj")):
                out |= self._kv_scale(prefix)
        return config | {"quantization_config": self.quantization_config()}, out

    def _kv_scale(self, prefix: str) -> dict[str, torch.Tensor]:
        """The KV cache scale of a k/v projection, where llm-compressor versions put it."""
        attention, _, proj = prefix.rpartition(".")
        if self.kv_scales_on_attention:
            return {f"{attention}.{proj[0]}_scale": torch.tensor(1.0 / _FP8_MAX)}
        return {f"{prefix}.output_scale": torch.tensor([1.0 / _FP8_MAX])}


WRITERS = {
    "gptq-int4": GptqWriter(),
    "gptq-int4-v2": GptqWriter(sym=False, checkpoint_format="gptq_v2"),
    "gptq-int4-act-order": GptqWriter(desc_act=True),
    "fp8": Fp8Writer(),
    "fp8-per-tensor": Fp8Writer(per_tensor=True, ignore=("lm_head", r"re:.*layers\.1\.mlp\.down_proj$"),
                                ignore_key="ignore", kv_scales_on_attention=True),
}
