"""Teacher-forced logits of a native model and their error against a reference model's.

Used by `hymt bench --compare-quantization` to measure what a scheme costs: every prompt
position's logits from the quantized model against the unquantized model on the same weights.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from hymt.engine.batch import ScheduledSeq, StepBatch
from hymt.engine.network import allocate_kv_cache
from hymt.engine.step_inputs import build_step_inputs

_BLOCK = 16


@dataclass(frozen=True)
class LogitsError:
    """Error of logits against a reference over every prompt position.

    Attributes:
        positions: positions compared.
        rel_l2: ||a - b|| / ||b|| over all logits of all positions.
        top1: share of positions whose argmax agrees.
        max_abs: largest absolute difference.
    """

    positions: int
    rel_l2: float
    top1: float
    max_abs: float


@torch.inference_mode()
def teacher_forced_logits(model, prompts: list[list[int]], *, batch: int = 8) -> list[torch.Tensor]:
    """Logits [len, vocab] float32 of every position of each prompt, on the CPU.

    Prompts run `batch` at a time in one packed prefill through a paged cache of their own.
    """
    device = model.device
    out: list[torch.Tensor] = []
    for first in range(0, len(prompts), batch):
        group = prompts[first : first + batch]
        blocks = [math.ceil(len(p) / _BLOCK) for p in group]
        caches = allocate_kv_cache(model, sum(blocks) + 1, _BLOCK, model.dtype, device)
        seqs, next_block = [], 1  # block 0 is the null block
        for i, (prompt, n) in enumerate(zip(group, blocks)):
            seqs.append(ScheduledSeq(i, list(prompt), 0, list(range(next_block, next_block + n)), True))
            next_block += n
        inputs = build_step_inputs(StepBatch(seqs), _BLOCK, device, all_logits=True)
        hidden = model(inputs.input_ids, inputs.metadata, caches)
        logits = model.compute_logits(hidden[inputs.metadata.logits_indices])  # [sum(len), vocab]
        out.extend(part.cpu() for part in logits.split([len(p) for p in group]))
        del caches, logits
    return out


def logits_error(got: list[torch.Tensor], ref: list[torch.Tensor]) -> LogitsError:
    """Error of `got` against `ref` (same prompts, same order)."""
    if len(got) != len(ref):
        raise ValueError(f"{len(got)} logits tensors against {len(ref)} references")
    sq_diff = sq_ref = 0.0
    agree = positions = 0
    max_abs = 0.0
    for a, b in zip(got, ref):
        a, b = a.float(), b.float()
        diff = a - b
        sq_diff += float(diff.square().sum())
        sq_ref += float(b.square().sum())
        agree += int((a.argmax(-1) == b.argmax(-1)).sum())
        positions += a.shape[0]
        max_abs = max(max_abs, float(diff.abs().max()))
    return LogitsError(positions, math.sqrt(sq_diff / max(sq_ref, 1e-30)), agree / max(positions, 1), max_abs)
