"""One step's model inputs: the packed layout of a StepBatch, written by one function.

`fill_step_inputs` packs a StepBatch into flat numpy buffers with vectorised numpy (no
per-token Python loop): token ids, positions, KV slots, query offsets, context lengths, block
tables and the rows whose logits are sampled. The model runner fills its persistent buffers
with it every step (input_buffers.py); `build_step_inputs` fills fresh ones and returns
tensors, for code that drives the model directly (tests, tools, the quantization benchmark's
teacher-forced pass), so both read exactly the same layout.

Two paddings serve CUDA graphs, and both are inert (their outputs are never read, and they
write K/V only into the reserved null block):
- decode rows (`pad_to`): token 0 at position 0 writing KV slot 0, context length 1 over
  block table [0, 0, ...];
- tokens (`pad_tokens_to`, for steps with prefills): one padding sequence after the batch
  holds the missing tokens, at positions 0.. over the null block, every one writing slot 0;
  the prefill kernel's work list is filled up with inert items.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import chain

import numpy as np
import torch

from hymt.engine.attention_metadata import (
    INERT_QUERY_BLOCK,
    PREFILL_QUERY_BLOCK,
    AttentionMetadata,
    prefill_item_bound,
)
from hymt.engine.batch import ScheduledSeq, StepBatch

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
        num_items: rows of prefill_items (the prefill kernel's work list), padding included.
        max_query_len / max_seq_len / is_decode_only: as in AttentionMetadata.
    """

    num_tokens: int
    num_seqs: int
    num_real_seqs: int
    num_sample: int
    num_cols: int
    num_items: int
    max_query_len: int
    max_seq_len: int
    is_decode_only: bool


def allocate_step_buffers(max_tokens: int, max_seqs: int, max_cols: int, *, pin: bool = False
                          ) -> dict[str, torch.Tensor]:
    """Zeroed host buffers for up to max_tokens tokens, max_seqs sequences and max_cols blocks each.

    Per-sequence buffers have one row more than max_seqs: the padding sequence of `pad_tokens_to`.
    """
    rows = max_seqs + 1

    def host(n: int, dtype: torch.dtype) -> torch.Tensor:
        return torch.zeros(n, dtype=dtype, pin_memory=pin)

    return {
        "input_ids": host(max_tokens, torch.int64),
        "positions": host(max_tokens, torch.int64),
        "slot_mapping": host(max_tokens, torch.int64),
        "query_start_loc": host(rows + 1, torch.int32),
        "seq_lens": host(rows, torch.int32),
        "block_tables": host(rows * max_cols, torch.int32),  # flat; viewed [rows, cols]
        "logits_indices": host(max_seqs, torch.int64),
        "deferred": host(2 * max_seqs, torch.int64),  # [dst..., src...] of pending inputs
        "prefill_items": host(2 * prefill_item_bound(max_tokens, rows), torch.int32),  # flat; viewed [items, 2]
    }


def filled_lengths(layout: StepLayout) -> dict[str, int]:
    """How much of each buffer a step with `layout` uses (what the runner uploads)."""
    return {
        "input_ids": layout.num_tokens,
        "positions": layout.num_tokens,
        "slot_mapping": layout.num_tokens,
        "query_start_loc": layout.num_seqs + 1,
        "seq_lens": layout.num_seqs,
        "block_tables": layout.num_seqs * layout.num_cols,
        "logits_indices": layout.num_sample,
        "prefill_items": 2 * layout.num_items,
    }


def metadata_view(buffers: dict[str, torch.Tensor], layout: StepLayout) -> AttentionMetadata:
    """AttentionMetadata over the filled prefix of `buffers` (views, no copies)."""
    t, n, cols = layout.num_tokens, layout.num_seqs, layout.num_cols
    return AttentionMetadata(
        positions=buffers["positions"][:t],
        slot_mapping=buffers["slot_mapping"][:t],
        query_start_loc=buffers["query_start_loc"][: n + 1],
        seq_lens=buffers["seq_lens"][:n],
        block_tables=buffers["block_tables"][: n * cols].view(n, cols),
        max_query_len=layout.max_query_len,
        max_seq_len=layout.max_seq_len,
        is_decode_only=layout.is_decode_only,
        logits_indices=buffers["logits_indices"][: layout.num_sample],
        prefill_items=buffers["prefill_items"][: 2 * layout.num_items].view(layout.num_items, 2),
    )


@dataclass(frozen=True)
class StepInputs:
    """What the model's forward takes for one step.

    Attributes:
        input_ids: [num_tokens] int64, the batch's tokens packed in order.
        metadata: the step's AttentionMetadata, on the same device.
    """

    input_ids: torch.Tensor
    metadata: AttentionMetadata


def build_step_inputs(batch: StepBatch, block_size: int, device: torch.device | str, *,
                      num_cols: int | None = None, all_logits: bool = False,
                      pad_tokens_to: int | None = None) -> StepInputs:
    """`batch` packed by fill_step_inputs into tensors of its own on `device`.

    num_cols: block-table width (default the widest table). all_logits: logits_indices covers
    every token of the batch, not only each sampling sequence's last (teacher-forced logits).
    pad_tokens_to: as fill_step_inputs (the layout of a step graph).
    Raises ValueError when a block table cannot hold its sequence's tokens.
    """
    for i, s in enumerate(batch.seqs):
        end = s.start_pos + len(s.token_ids)
        if len(s.block_table) * block_size < end:
            raise ValueError(f"sequence {i}: {len(s.block_table)} blocks cannot hold {end} tokens")
    num_tokens = batch.num_tokens
    cols = num_cols if num_cols is not None else max(len(s.block_table) for s in batch.seqs)
    # Every sequence has a token, so num_tokens rows also hold every per-sequence field.
    size = max(num_tokens, pad_tokens_to or 0)
    host = allocate_step_buffers(size, size, cols)
    layout = fill_step_inputs(batch, block_size, {k: v.numpy() for k, v in host.items()}, num_cols=cols,
                              pad_tokens_to=pad_tokens_to)
    if all_logits:
        host["logits_indices"][:num_tokens] = torch.arange(num_tokens)
        layout = replace(layout, num_sample=num_tokens)
    on_device = {name: host[name][:n].to(device) for name, n in filled_lengths(layout).items()}
    return StepInputs(on_device["input_ids"], metadata_view(on_device, layout))


def fill_step_inputs(
    batch: StepBatch,
    block_size: int,
    bufs: dict[str, np.ndarray],
    *,
    pad_to: int | None = None,
    pad_tokens_to: int | None = None,
    pad_items_to: int | None = None,
    num_cols: int | None = None,
    max_seq_len: int | None = None,
) -> StepLayout:
    """Pack `batch` into the numpy buffers `bufs` (as allocate_step_buffers makes them); returns the layout.

    pad_to: pad a decode-only batch with inert rows up to this many sequences (decode graphs).
    pad_tokens_to / pad_items_to: pad any batch to this many tokens with one inert sequence,
        and its prefill work list to this many items (step graphs; module docstring).
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
    extra = 0 if pad_tokens_to is None else pad_tokens_to - t
    if extra < 0:
        raise ValueError(f"pad_tokens_to={pad_tokens_to} is smaller than the batch ({t} tokens)")
    table = _fill_block_tables(seqs, bufs["block_tables"], rows + (extra > 0), num_cols)
    _fill_tokens(seqs, bufs, q_lens, starts, table, block_size)
    seq_lens = starts + q_lens
    bufs["seq_lens"][:n] = seq_lens
    sample = np.fromiter((s.sample for s in seqs), np.bool_, n)
    logits_idx = bufs["query_start_loc"][1 : n + 1][sample].astype(np.int64) - 1  # each sampler's last token
    num_sample = len(logits_idx)
    bufs["logits_indices"][:num_sample] = logits_idx
    if rows > n:
        _pad_decode_rows(bufs, n, rows)
        num_sample = rows if num_sample == n else num_sample
        t = rows
    if extra:
        _pad_tokens(bufs, n, t, extra)
        q_lens = np.append(q_lens, extra)
    # Decode-only steps attend with the decode kernel: only a step graph (pad_items_to) sends
    # decode rows through the prefill kernel, which reads the work list.
    needs_items = not decode_only or extra > 0 or pad_items_to is not None
    num_items = _fill_prefill_items(bufs["prefill_items"], q_lens, pad_items_to) if needs_items else 0
    return StepLayout(
        num_tokens=t + extra,
        num_seqs=rows + (extra > 0),
        num_real_seqs=n,
        num_sample=num_sample,
        num_cols=table.shape[1],
        num_items=num_items,
        max_query_len=int(q_lens.max()),
        max_seq_len=int(seq_lens.max()) if max_seq_len is None else max_seq_len,
        is_decode_only=decode_only and not extra,
    )


def _fill_tokens(seqs: list[ScheduledSeq], bufs: dict[str, np.ndarray], q_lens: np.ndarray, starts: np.ndarray,
                 table: np.ndarray, block_size: int) -> None:
    """Token ids, query offsets, positions and KV slots of every token (`table`: the block tables)."""
    n, t = len(seqs), int(q_lens.sum())
    bufs["input_ids"][:t] = np.fromiter(chain.from_iterable(s.token_ids for s in seqs), np.int64, t)
    qsl = bufs["query_start_loc"]
    qsl[0] = 0
    np.cumsum(q_lens, out=qsl[1 : n + 1])
    if t == n:  # one token per sequence: no repeats needed
        positions = starts
        tok_row = np.arange(n)
    else:
        tok_row = np.repeat(np.arange(n), q_lens)
        positions = np.arange(t) - np.repeat(qsl[:n].astype(np.int64), q_lens) + np.repeat(starts, q_lens)
    bufs["positions"][:t] = positions
    bufs["slot_mapping"][:t] = table[tok_row, positions // block_size].astype(np.int64) * block_size + (
        positions % block_size
    )


def _fill_block_tables(seqs: list[ScheduledSeq], flat_buffer: np.ndarray, rows: int,
                       num_cols: int | None) -> np.ndarray:
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


def _pad_tokens(bufs: dict[str, np.ndarray], n: int, t: int, extra: int) -> None:
    """Row n: a sequence of `extra` inert tokens (token 0, positions 0.., slot 0 of the null block)."""
    bufs["input_ids"][t : t + extra] = 0
    bufs["positions"][t : t + extra] = np.arange(extra)
    bufs["slot_mapping"][t : t + extra] = PAD_SLOT
    bufs["seq_lens"][n] = extra
    bufs["query_start_loc"][n + 1] = t + extra


def _fill_prefill_items(flat_buffer: np.ndarray, q_lens: np.ndarray, pad_items_to: int | None) -> int:
    """The prefill work list: (row, query block) for each PREFILL_QUERY_BLOCK queries of every
    row of `q_lens`, then inert items up to `pad_items_to`; returns its length."""
    per_row = (q_lens + PREFILL_QUERY_BLOCK - 1) // PREFILL_QUERY_BLOCK
    total = int(per_row.sum())
    size = total if pad_items_to is None else pad_items_to
    if size < total:
        raise ValueError(f"pad_items_to={pad_items_to} is smaller than the work list ({total} items)")
    items = flat_buffer[: 2 * size].reshape(size, 2)
    items[:total, 0] = np.repeat(np.arange(len(q_lens)), per_row)
    items[:total, 1] = np.arange(total) - np.repeat(np.cumsum(per_row) - per_row, per_row)
    items[total:, 0] = 0
    items[total:, 1] = INERT_QUERY_BLOCK
    return size
