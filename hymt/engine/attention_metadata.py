"""What the attention layers need to know about one step's packed tokens."""
from __future__ import annotations

from dataclasses import dataclass

import torch


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
