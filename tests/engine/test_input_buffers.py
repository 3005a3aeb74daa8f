"""InputBuffers: the runner's persistent step inputs, filled in each graph's layout."""
from __future__ import annotations

import torch

from hymt.engine.batch import ScheduledSeq, StepBatch
from hymt.engine.input_buffers import InputBuffers

BS = 4


def test_a_step_graph_layout_pads_tokens_and_work_items():
    buffers = InputBuffers(max_tokens=32, max_seqs=4, max_cols=8, device=torch.device("cpu"))
    batch = StepBatch([ScheduledSeq(0, [3, 4, 5], 0, [1], True), ScheduledSeq(1, [9], 6, [2, 3], True)])
    layout = buffers.fill(batch, BS, pad_tokens_to=16, pad_items_to=6, num_cols=8)
    meta = buffers.metadata(layout)
    assert buffers.input_ids(layout).tolist() == [3, 4, 5, 9] + [0] * 12
    assert meta.query_start_loc.tolist() == [0, 3, 4, 16] and meta.seq_lens.tolist() == [3, 7, 12]
    assert meta.prefill_items.shape == (6, 2) and meta.prefill_items[:3].tolist() == [[0, 0], [1, 0], [2, 0]]
    assert meta.logits_indices.tolist() == [2, 3]


def test_decode_graph_layout_pads_rows():
    buffers = InputBuffers(max_tokens=32, max_seqs=4, max_cols=8, device=torch.device("cpu"))
    layout = buffers.fill(StepBatch([ScheduledSeq(0, [7], 5, [1, 2], True)]), BS, pad_to=4, num_cols=8)
    assert (layout.num_tokens, layout.num_seqs, layout.num_real_seqs) == (4, 4, 1)
    assert buffers.metadata(layout).seq_lens.tolist() == [6, 1, 1, 1]
    assert layout.num_items == 0  # the decode kernel reads no work list


def test_decode_rows_in_a_step_graph_get_a_work_list():
    buffers = InputBuffers(max_tokens=32, max_seqs=4, max_cols=8, device=torch.device("cpu"))
    batch = StepBatch([ScheduledSeq(0, [7], 5, [1, 2], True), ScheduledSeq(1, [8], 3, [3], True)])
    layout = buffers.fill(batch, BS, pad_tokens_to=2, pad_items_to=3, num_cols=8)
    assert layout.is_decode_only and layout.num_items == 3
    assert buffers.metadata(layout).prefill_items[:2].tolist() == [[0, 0], [1, 0]]
    assert buffers.logits_indices(layout).tolist() == [0, 1]
