"""Persistent step-input buffers: host (pinned on CUDA) and device copies for the engine's lifetime.

Each step fills a prefix of the host buffers (step_inputs.fill_step_inputs), copies that
prefix to the device without blocking, and views the device prefix as AttentionMetadata.
CUDA graphs read the same device buffers, so a replay only needs the fill and the copy. On
CPU the host buffers are the device buffers.

On CUDA there are two host sets, alternated by `flip()` at each step: the engine plans step
n+1 while step n's copies may still be queued, and it has waited for step n-1 (whose copies
came from the other set) before filling again.
"""
from __future__ import annotations

import torch

from hymt.engine.attention_metadata import AttentionMetadata
from hymt.engine.batch import StepBatch
from hymt.engine.step_inputs import (
    StepLayout,
    allocate_step_buffers,
    fill_step_inputs,
    filled_lengths,
    metadata_view,
)


class InputBuffers:
    """Host + device buffers for up to `max_tokens` tokens, `max_seqs` sequences, `max_cols` blocks each."""

    def __init__(self, max_tokens: int, max_seqs: int, max_cols: int, device: torch.device):
        self.max_tokens, self.max_seqs, self.max_cols = max_tokens, max_seqs, max_cols
        self.device = device
        pin = device.type == "cuda"
        self._sets = [allocate_step_buffers(max_tokens, max_seqs, max_cols, pin=pin) for _ in range(2 if pin else 1)]
        self._np_sets = [{k: v.numpy() for k, v in hs.items()} for hs in self._sets]
        self._current = 0
        self.host = self._sets[0]
        self.np = self._np_sets[0]
        if device.type == "cpu":
            self.dev = self.host
        else:
            self.dev = {k: torch.zeros_like(v, device=device) for k, v in self.host.items()}

    def flip(self) -> None:
        """Switch to the other host set (CUDA); call once per step before filling."""
        if len(self._sets) > 1:
            self._current ^= 1
            self.host = self._sets[self._current]
            self.np = self._np_sets[self._current]

    @property
    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in self.dev.values())

    def upload(self, layout: StepLayout) -> None:
        """Copy the step's prefix of every host buffer to the device (asynchronously on CUDA)."""
        if self.dev is self.host:
            return
        for name, n in filled_lengths(layout).items():
            self.dev[name][:n].copy_(self.host[name][:n], non_blocking=True)

    def patch_deferred(self, dst: list[int], src: list[int], prev_tokens: torch.Tensor) -> None:
        """input_ids[dst[i]] = prev_tokens[src[i]] on the device: inputs the host never saw.

        prev_tokens [num_prev_samples] int64 is the previous step's sampler output.
        """
        k = len(dst)
        if not k:
            return
        staged = self.np["deferred"]
        staged[:k] = dst
        staged[k : 2 * k] = src
        idx = self.host["deferred"][: 2 * k]
        if self.dev is not self.host:
            idx = self.dev["deferred"][: 2 * k].copy_(idx, non_blocking=True)
        self.dev["input_ids"].index_copy_(0, idx[:k], prev_tokens.index_select(0, idx[k:]))

    def input_ids(self, layout: StepLayout) -> torch.Tensor:
        return self.dev["input_ids"][: layout.num_tokens]

    def logits_indices(self, layout: StepLayout) -> torch.Tensor:
        """The step's sampling rows on the device (what metadata() holds, without building it)."""
        return self.dev["logits_indices"][: layout.num_sample]

    def metadata(self, layout: StepLayout) -> AttentionMetadata:
        """Device views of the step's prefix, as the attention layers read them."""
        return metadata_view(self.dev, layout)

    def fill(self, batch: StepBatch, block_size: int, *, pad_to: int | None = None,
             pad_tokens_to: int | None = None, pad_items_to: int | None = None,
             num_cols: int | None = None, max_seq_len: int | None = None) -> StepLayout:
        """Write `batch` into the host buffers; see fill_step_inputs."""
        return fill_step_inputs(batch, block_size, self.np, pad_to=pad_to, pad_tokens_to=pad_tokens_to,
                                pad_items_to=pad_items_to, num_cols=num_cols, max_seq_len=max_seq_len)
