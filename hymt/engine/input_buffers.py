"""Persistent step-input buffers and the numpy code that fills them from a StepBatch.

Host buffers (pinned on CUDA) and one set of device buffers live for the engine's lifetime;
each step fills a prefix of the host buffers with vectorised numpy (no per-token Python
loop), copies that prefix to the device without blocking, and views the device prefix as
AttentionMetadata. CUDA graphs read the same device buffers, so a replay only needs the fill
and the copy. On CPU the host buffers are the device buffers.

On CUDA there are two host sets, alternated by `flip()` at each step: the engine plans step
n+1 while step n's copies may still be queued, and it has waited for step n-1 (whose copies
came from the other set) before filling again.

Padded rows (CUDA-graph buckets larger than the batch) are made inert: token 0 at position 0
writing KV slot 0 (the reserved null block), context length 1 over block table [0, 0, ...].
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import chain

import numpy as np
import torch

from hymt.engine.attention_metadata import AttentionMetadata
from hymt.engine.batch import StepBatch

PAD_SLOT = 0  # first slot of the null block (block_manager.NULL_BLOCK)


@dataclass(frozen=True)
class StepLayout:
    """Sizes of the filled prefix of the buffers for one step.

    Attributes:
        num_tokens: tokens in the step, padding included.
        num_seqs: sequences in the step, padding rows included.
        num_real_seqs: sequences of the batch (before padding).
        num_sample: rows of logits_indices (sampling sequences).
        num_cols: block-table columns.
        max_query_len / max_seq_len / is_decode_only: as in AttentionMetadata.
    """

    num_tokens: int
    num_seqs: int
    num_real_seqs: int
    num_sample: int
    num_cols: int
    max_query_len: int
    max_seq_len: int
    is_decode_only: bool


class InputBuffers:
    """Host + device buffers for up to `max_tokens` tokens, `max_seqs` sequences, `max_cols` blocks each."""

    def __init__(self, max_tokens: int, max_seqs: int, max_cols: int, device: torch.device):
        self.max_tokens, self.max_seqs, self.max_cols = max_tokens, max_seqs, max_cols
        self.device = device
        pin = device.type == "cuda"

        def host(n: int, dtype: torch.dtype) -> torch.Tensor:
            return torch.zeros(n, dtype=dtype, pin_memory=pin)

        def host_set() -> dict[str, torch.Tensor]:
            return {
                "input_ids": host(max_tokens, torch.int64),
                "positions": host(max_tokens, torch.int64),
                "slot_mapping": host(max_tokens, torch.int64),
                "query_start_loc": host(max_seqs + 1, torch.int32),
                "seq_lens": host(max_seqs, torch.int32),
                "block_tables": host(max_seqs * max_cols, torch.int32),  # flat; viewed [rows, cols]
                "logits_indices": host(max_seqs, torch.int64),
                "deferred": host(2 * max_seqs, torch.int64),  # [dst..., src...] of pending inputs
            }

        self._sets = [host_set() for _ in range(2 if pin else 1)]
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
        sizes = {
            "input_ids": layout.num_tokens,
            "positions": layout.num_tokens,
            "slot_mapping": layout.num_tokens,
            "query_start_loc": layout.num_seqs + 1,
            "seq_lens": layout.num_seqs,
            "block_tables": layout.num_seqs * layout.num_cols,
            "logits_indices": layout.num_sample,
        }
        for name, n in sizes.items():
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

    def metadata(self, layout: StepLayout) -> AttentionMetadata:
        """Device views of the step's prefix, as the attention layers read them."""
        d = self.dev
        t, n, cols = layout.num_tokens, layout.num_seqs, layout.num_cols
        return AttentionMetadata(
            positions=d["positions"][:t],
            slot_mapping=d["slot_mapping"][:t],
            query_start_loc=d["query_start_loc"][: n + 1],
            seq_lens=d["seq_lens"][:n],
            block_tables=d["block_tables"][: n * cols].view(n, cols),
            max_query_len=layout.max_query_len,
            max_seq_len=layout.max_seq_len,
            is_decode_only=layout.is_decode_only,
            logits_indices=d["logits_indices"][: layout.num_sample],
        )

    def fill(self, batch: StepBatch, block_size: int, *, pad_to: int | None = None,
             num_cols: int | None = None, max_seq_len: int | None = None) -> StepLayout:
        """Write `batch` into the host buffers; see fill_step_inputs."""
        return fill_step_inputs(batch, block_size, self.np, pad_to=pad_to, num_cols=num_cols,
                                max_seq_len=max_seq_len)


def fill_step_inputs(
    batch: StepBatch,
    block_size: int,
    bufs: dict[str, np.ndarray],
    *,
    pad_to: int | None = None,
    num_cols: int | None = None,
    max_seq_len: int | None = None,
) -> StepLayout:
    """Pack `batch` into the numpy buffers `bufs` (keys as InputBuffers.host) and return the layout.

    pad_to: pad a decode-only batch with inert rows up to this many sequences (CUDA graphs).
    num_cols: block-table width (graphs use the full width); default the widest table.
    max_seq_len: value reported as max_seq_len (graphs bake the bucket's); default the real one.
    """
    seqs = batch.seqs
    n = len(seqs)
    rows = n if pad_to is None else pad_to
    if rows < n:
        raise ValueError(f"pad_to={pad_to} is smaller than the batch ({n} sequences)")
    q_lens = np.fromiter((len(s.token_ids) for s in seqs), np.int64, n)
    starts = np.fromiter((s.start_pos for s in seqs), np.int64, n)
    t = int(q_lens.sum())
    decode_only = t == n and bool(starts.min() > 0)
    if pad_to is not None and pad_to > n and not decode_only:
        raise ValueError("only decode-only batches can be padded")
    seq_lens = starts + q_lens

    table = _fill_block_tables(seqs, bufs["block_tables"], rows, num_cols)
    cols = table.shape[1]

    ids = bufs["input_ids"]
    ids[:t] = np.fromiter(chain.from_iterable(s.token_ids for s in seqs), np.int64, t)
    qsl = bufs["query_start_loc"]
    qsl[0] = 0
    np.cumsum(q_lens, out=qsl[1 : n + 1])
    if t == n:
        positions = starts
        tok_row = np.arange(n)
    else:
        tok_row = np.repeat(np.arange(n), q_lens)
        positions = np.arange(t) - np.repeat(qsl[:n].astype(np.int64), q_lens) + np.repeat(starts, q_lens)
    bufs["positions"][:t] = positions
    bufs["slot_mapping"][:t] = table[tok_row, positions // block_size].astype(np.int64) * block_size + (
        positions % block_size
    )
    bufs["seq_lens"][:n] = seq_lens
    sample = np.fromiter((s.sample for s in seqs), np.bool_, n)
    logits_idx = qsl[1 : n + 1][sample].astype(np.int64) - 1
    num_sample = len(logits_idx)
    bufs["logits_indices"][:num_sample] = logits_idx

    if rows > n:
        _pad_decode_rows(bufs, n, rows)
        num_sample = rows if num_sample == n else num_sample
        t = rows
    return StepLayout(
        num_tokens=t,
        num_seqs=rows,
        num_real_seqs=n,
        num_sample=num_sample,
        num_cols=cols,
        max_query_len=int(q_lens.max()),
        max_seq_len=int(seq_lens.max()) if max_seq_len is None else max_seq_len,
        is_decode_only=decode_only,
    )


def _fill_block_tables(seqs: list, flat_buffer: np.ndarray, rows: int, num_cols: int | None) -> np.ndarray:
    """Write the block tables into flat_buffer viewed [rows, cols] (zeros elsewhere); returns the view."""
    n = len(seqs)
    bt_lens = np.fromiter((len(s.block_table) for s in seqs), np.int64, n)
    cols = int(bt_lens.max()) if num_cols is None else num_cols
    table = flat_buffer[: rows * cols].reshape(rows, cols)
    table.fill(0)
    total = int(bt_lens.sum())
    flat = np.fromiter(chain.from_iterable(s.block_table for s in seqs), np.int32, total)
    offsets = np.cumsum(bt_lens) - bt_lens
    table[np.repeat(np.arange(n), bt_lens), np.arange(total) - np.repeat(offsets, bt_lens)] = flat
    return table


def _pad_decode_rows(bufs: dict[str, np.ndarray], n: int, rows: int) -> None:
    """Rows n..rows-1: one inert token each (token 0, position 0, null-block slot, length 1)."""
    bufs["input_ids"][n:rows] = 0
    bufs["positions"][n:rows] = 0
    bufs["slot_mapping"][n:rows] = PAD_SLOT
    bufs["seq_lens"][n:rows] = 1
    bufs["query_start_loc"][n + 1 : rows + 1] = np.arange(n + 1, rows + 1)
    bufs["logits_indices"][n:rows] = np.arange(n, rows)
