"""What the attention layers need to know about one step's packed tokens."""
from __future__ import annotations

from dataclasses import dataclass

import torch

# Queries per work item of the prefill attention kernel: each item is one sequence's run of
# up to this many consecutive query tokens (with every query head of a KV group).
PREFILL_QUERY_BLOCK = 16
# The query-block index of a padding item: past every sequence's queries, so the kernel
# program that draws it returns at once.
INERT_QUERY_BLOCK = 1 << 20


def prefill_item_bound(num_tokens: int, num_seqs: int) -> int:
    """Most work items `num_tokens` tokens in `num_seqs` sequences can need: each sequence's
    cdiv(q_len, B) summed is at most (tokens + (B - 1) seqs) / B, and never above the tokens."""
    return min(num_tokens, (num_tokens + (PREFILL_QUERY_BLOCK - 1) * num_seqs) // PREFILL_QUERY_BLOCK)


@dataclass
class AttentionMetadata:
    """Layout of one step's tokens, packed along one axis (no padding between sequences).

    All tensors live on the model's device. Built from a `StepBatch` by step_inputs.fill_step_inputs
    (the model runner's buffers) or step_inputs.build_step_inputs (tensors of their own).

    Attributes:
        positions: [num_tokens] int64, absolute position of each token.
        slot_mapping: [num_tokens] int64, flat KV slot (block_id * block_size + offset) each token
            writes its K/V to; -1 means "write nothing". Block 0 is the reserved null block:
            the model runner pads CUDA-graph rows with slot 0 (seq_len 1, block table all 0),
            so padding is harmless even for a store that does not skip -1.
        query_start_loc: [num_seqs + 1] int32, cumulative query lengths (token offsets per sequence).
        seq_lens: [num_seqs] int32, context length of each sequence after this step.
        block_tables: [num_seqs, max_blocks_per_seq] int32, physical block ids, padded with 0.
        max_query_len: longest query of the step (1 for decode-only steps).
        max_seq_len: longest context of the step.
        is_decode_only: every sequence computes exactly one token (the CUDA-graph path).
        logits_indices: [num_sampling_rows] int64, token indices whose hidden states give logits.
        prefill_items: [num_items, 2] int32, the prefill kernel's work list: (sequence row,
            query block) pairs, PREFILL_QUERY_BLOCK queries each; padding items (CUDA graphs)
            carry INERT_QUERY_BLOCK. Its length, not the batch, sets the kernel's grid. Empty
            for decode-only steps outside a step graph (the decode kernel reads none).
    """

    positions: torch.Tensor
    slot_mapping: torch.Tensor
    query_start_loc: torch.Tensor
    seq_lens: torch.Tensor
    block_tables: torch.Tensor
    max_query_len: int
    max_seq_len: int
    is_decode_only: bool
    logits_indices: torch.Tensor
    prefill_items: torch.Tensor
