"""build_attention_metadata: the packed layout the attention layers read."""
from __future__ import annotations

import pytest
import torch

from hymt.engine.layers import SeqChunk, build_attention_metadata


def test_packs_chunks_in_order():
    meta = build_attention_metadata(
        [SeqChunk(0, 3, (7,)), SeqChunk(5, 2, (2, 9)), SeqChunk(4, 1, (1, 3), sample=True)], 4, "cpu",
        max_blocks_per_seq=3,
    )
    assert meta.positions.tolist() == [0, 1, 2, 5, 6, 4]
    # slot = block_table[pos // 4] * 4 + pos % 4
    assert meta.slot_mapping.tolist() == [28, 29, 30, 37, 38, 12]
    assert meta.query_start_loc.tolist() == [0, 3, 5, 6]
    assert meta.seq_lens.tolist() == [3, 7, 5]
    assert meta.block_tables.tolist() == [[7, 0, 0], [2, 9, 0], [1, 3, 0]]
    assert meta.logits_indices.tolist() == [2, 4, 5]
    assert (meta.max_query_len, meta.max_seq_len, meta.is_decode_only) == (3, 7, False)
    assert meta.query_start_loc.dtype == meta.seq_lens.dtype == meta.block_tables.dtype == torch.int32


def test_decode_only_and_all_logits():
    meta = build_attention_metadata([SeqChunk(3, 1, (0,), sample=False), SeqChunk(9, 1, (1, 2, 4))], 4, "cpu",
                                    all_logits=True)
    assert meta.is_decode_only and meta.max_query_len == 1
    assert meta.logits_indices.tolist() == [0, 1]


def test_too_few_blocks_is_an_error():
    with pytest.raises(ValueError, match="cannot hold 9 tokens"):
        build_attention_metadata([SeqChunk(5, 4, (0, 1))], 4, "cpu")
