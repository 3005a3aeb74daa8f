"""Build AttentionMetadata from plain per-sequence chunks (tests, tools, simple callers).

The model runner builds its own metadata into persistent buffers; this is the readable
version of the same layout, used to drive the model directly.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from hymt.engine.attention_metadata import AttentionMetadata


@dataclass(frozen=True)
class SeqChunk:
    """One sequence's tokens in a step.

    Attributes:
        start_pos: tokens of this sequence already in the KV cache.
        num_tokens: tokens computed now (1 for decode).
        block_table: physical block ids covering positions [0, start_pos + num_tokens).
        sample: whether the last token's hidden state gives logits.
    """

    start_pos: int
    num_tokens: int
    block_table: tuple[int, ...]
    sample: bool = True


def build_attention_metadata(
    chunks: list[SeqChunk], block_size: int, device, *, max_blocks_per_seq: int | None = None,
    all_logits: bool = False,
) -> AttentionMetadata:
    """Pack chunks in order; `all_logits` returns logits indices for every token (teacher forcing)."""
    positions, slots, qsl, seq_lens, logits_idx = [], [], [0], [], []
    width = max_blocks_per_seq or max(len(c.block_table) for c in chunks)
    tables = torch.zeros((len(chunks), width), dtype=torch.int32)
    for i, c in enumerate(chunks):
        end = c.start_pos + c.num_tokens
        if len(c.block_table) * block_size < end:
            raise ValueError(f"sequence {i}: {len(c.block_table)} blocks cannot hold {end} tokens")
        for pos in range(c.start_pos, end):
            positions.append(pos)
            slots.append(c.block_table[pos // block_size] * block_size + pos % block_size)
        first = qsl[-1]
        qsl.append(first + c.num_tokens)
        seq_lens.append(end)
        tables[i, : len(c.block_table)] = torch.tensor(c.block_table, dtype=torch.int32)
        if all_logits:
            logits_idx.extend(range(first, first + c.num_tokens))
        elif c.sample:
            logits_idx.append(first + c.num_tokens - 1)
    return AttentionMetadata(
        positions=torch.tensor(positions, dtype=torch.int64, device=device),
        slot_mapping=torch.tensor(slots, dtype=torch.int64, device=device),
        query_start_loc=torch.tensor(qsl, dtype=torch.int32, device=device),
        seq_lens=torch.tensor(seq_lens, dtype=torch.int32, device=device),
        block_tables=tables.to(device),
        max_query_len=max(c.num_tokens for c in chunks),
        max_seq_len=max(seq_lens),
        is_decode_only=all(c.num_tokens == 1 and c.start_pos > 0 for c in chunks),
        logits_indices=torch.tensor(logits_idx, dtype=torch.int64, device=device),
    )
