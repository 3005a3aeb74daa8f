"""The packed step layout: fill_step_inputs (the runner's buffers) and build_step_inputs (fresh tensors)."""
from __future__ import annotations

import pytest
import torch

from hymt.engine.batch import ScheduledSeq, StepBatch
from hymt.engine.step_inputs import allocate_step_buffers, build_step_inputs, fill_step_inputs

BS = 4


def mixed_batch() -> StepBatch:
    return StepBatch([
        ScheduledSeq(0, [11], 9, [3, 7, 2], True),  # decode at position 9
        ScheduledSeq(1, [1, 2, 3, 4, 5, 6], 0, [4, 5], True),  # fresh prompt
        ScheduledSeq(2, [8, 9, 10], 5, [6, 1], False),  # middle chunk after a cached prefix
        ScheduledSeq(3, [12], 3, [8], True),
    ])


def numpy_buffers(max_tokens=64, max_seqs=8, max_cols=8):
    return {k: v.numpy() for k, v in allocate_step_buffers(max_tokens, max_seqs, max_cols).items()}


def test_a_mixed_batch_packs_in_order():
    inputs = build_step_inputs(mixed_batch(), BS, "cpu")
    meta = inputs.metadata
    assert inputs.input_ids.tolist() == [11, 1, 2, 3, 4, 5, 6, 8, 9, 10, 12]
    assert meta.positions.tolist() == [9, 0, 1, 2, 3, 4, 5, 5, 6, 7, 3]
    # slot = block_table[pos // 4] * 4 + pos % 4
    assert meta.slot_mapping.tolist() == [9, 16, 17, 18, 19, 20, 21, 5, 6, 7, 35]
    assert meta.query_start_loc.tolist() == [0, 1, 7, 10, 11]
    assert meta.seq_lens.tolist() == [10, 6, 8, 4]
    assert meta.block_tables.tolist() == [[3, 7, 2], [4, 5, 0], [6, 1, 0], [8, 0, 0]]
    assert meta.logits_indices.tolist() == [0, 6, 10]  # sequence 2 does not sample
    assert (meta.max_query_len, meta.max_seq_len, meta.is_decode_only) == (6, 10, False)
    assert meta.query_start_loc.dtype == meta.seq_lens.dtype == meta.block_tables.dtype == torch.int32
    assert meta.positions.dtype == meta.slot_mapping.dtype == meta.logits_indices.dtype == torch.int64


def test_all_logits_and_a_wider_table():
    batch = StepBatch([ScheduledSeq(0, [4], 3, [0], False), ScheduledSeq(1, [5], 9, [1, 2, 4], True)])
    meta = build_step_inputs(batch, BS, "cpu", num_cols=5, all_logits=True).metadata
    assert meta.is_decode_only and meta.max_query_len == 1
    assert meta.logits_indices.tolist() == [0, 1]
    assert meta.block_tables.tolist() == [[0, 0, 0, 0, 0], [1, 2, 4, 0, 0]]
    assert meta.slot_mapping.tolist() == [3, 17]


def test_too_few_blocks_is_an_error():
    with pytest.raises(ValueError, match="cannot hold 9 tokens"):
        build_step_inputs(StepBatch([ScheduledSeq(0, [1, 2, 3, 4], 5, [0, 1], True)]), BS, "cpu")


def test_decode_padding_rows_are_inert():
    batch = StepBatch([ScheduledSeq(0, [5], 17, [2, 3, 9, 4, 1], True), ScheduledSeq(1, [6], 2, [7], True)])
    bufs = numpy_buffers()
    layout = fill_step_inputs(batch, BS, bufs, pad_to=4, num_cols=8, max_seq_len=32)
    assert (layout.num_tokens, layout.num_seqs, layout.num_real_seqs, layout.num_cols) == (4, 4, 2, 8)
    assert layout.is_decode_only and layout.max_seq_len == 32
    # 17 -> block table[4] = 1, slot 1 * 4 + 1; 2 -> block 7, slot 30; padding -> slot 0 (the null block)
    assert bufs["slot_mapping"][:4].tolist() == [5, 30, 0, 0]
    assert bufs["seq_lens"][:4].tolist() == [18, 3, 1, 1]
    assert bufs["query_start_loc"][:5].tolist() == [0, 1, 2, 3, 4]
    table = bufs["block_tables"][:32].reshape(4, 8)
    assert table[0].tolist() == [2, 3, 9, 4, 1, 0, 0, 0] and not table[2:].any()
    assert bufs["logits_indices"][:4].tolist() == [0, 1, 2, 3]


def test_fill_clears_stale_table_entries():
    bufs = numpy_buffers()
    fill_step_inputs(StepBatch([ScheduledSeq(0, [1], 20, [5, 6, 7, 8, 9, 10], True)]), BS, bufs, num_cols=8)
    fill_step_inputs(StepBatch([ScheduledSeq(0, [1], 2, [3], True)]), BS, bufs, num_cols=8)
    assert bufs["block_tables"][:8].tolist() == [3, 0, 0, 0, 0, 0, 0, 0]


def test_only_decode_batches_pad():
    with pytest.raises(ValueError, match="decode-only"):
        fill_step_inputs(mixed_batch(), BS, numpy_buffers(), pad_to=8)


def test_the_prefill_work_list_covers_every_query_in_blocks_of_16():
    batch = StepBatch([ScheduledSeq(0, list(range(40)), 0, list(range(1, 11)), True),
                       ScheduledSeq(1, [7], 30, list(range(11, 19)), True),
                       ScheduledSeq(2, list(range(16)), 4, list(range(19, 24)), True)])
    meta = build_step_inputs(batch, BS, "cpu").metadata
    assert meta.prefill_items.tolist() == [[0, 0], [0, 1], [0, 2], [1, 0], [2, 0]]
    assert meta.prefill_items.dtype == torch.int32


def test_token_padding_adds_one_inert_sequence_and_inert_work_items():
    from hymt.engine.attention_metadata import INERT_QUERY_BLOCK

    bufs = numpy_buffers()
    layout = fill_step_inputs(mixed_batch(), BS, bufs, pad_tokens_to=16, pad_items_to=9, num_cols=8)
    # 11 real tokens in 4 sequences, then a fifth sequence of 5 padding tokens
    assert (layout.num_tokens, layout.num_seqs, layout.num_real_seqs, layout.num_items) == (16, 5, 4, 9)
    assert not layout.is_decode_only and layout.num_sample == 3
    assert bufs["input_ids"][11:16].tolist() == [0] * 5
    assert bufs["positions"][11:16].tolist() == [0, 1, 2, 3, 4]
    assert bufs["slot_mapping"][11:16].tolist() == [0] * 5  # the null block
    assert bufs["query_start_loc"][:6].tolist() == [0, 1, 7, 10, 11, 16]
    assert bufs["seq_lens"][:5].tolist() == [10, 6, 8, 4, 5]
    assert not bufs["block_tables"][4 * 8 : 5 * 8].any()
    items = bufs["prefill_items"][:18].reshape(9, 2).tolist()
    assert items[:5] == [[0, 0], [1, 0], [2, 0], [3, 0], [4, 0]]
    assert items[5:] == [[0, INERT_QUERY_BLOCK]] * 4
    assert bufs["logits_indices"][:3].tolist() == [0, 6, 10]


def test_token_padding_of_an_exact_fit_adds_no_sequence():
    layout = fill_step_inputs(mixed_batch(), BS, numpy_buffers(), pad_tokens_to=11, pad_items_to=4)
    assert (layout.num_tokens, layout.num_seqs, layout.num_items) == (11, 4, 4)


def test_token_padding_smaller_than_the_batch_is_an_error():
    with pytest.raises(ValueError, match="pad_tokens_to=8 is smaller than the batch"):
        fill_step_inputs(mixed_batch(), BS, numpy_buffers(), pad_tokens_to=8)
    with pytest.raises(ValueError, match="pad_items_to=3 is smaller than the work list"):
        fill_step_inputs(mixed_batch(), BS, numpy_buffers(), pad_tokens_to=16, pad_items_to=3)
