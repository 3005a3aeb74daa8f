"""The scheduler -> model runner hand-off: what one engine step computes."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ScheduledSeq:
    """One sequence's share of a step.

    Attributes:
        seq_id: the scheduler's id of the sequence.
        token_ids: tokens to compute now: a prompt chunk (prefill), or the last sampled token (decode).
        start_pos: position of token_ids[0]; equals the number of tokens already in the KV cache.
        block_table: physical KV block ids covering positions [0, start_pos + len(token_ids)).
        sample: True when the logits of the last of token_ids are needed (prompt finished, or decode).
    """

    seq_id: int
    token_ids: list[int]
    start_pos: int
    block_table: list[int]
    sample: bool


@dataclass
class StepBatch:
    """Everything the runner computes in one step, prefill and decode mixed."""

    seqs: list[ScheduledSeq]

    @property
    def num_tokens(self) -> int:
        return sum(len(s.token_ids) for s in self.seqs)

    @property
    def is_decode_only(self) -> bool:
        return all(len(s.token_ids) == 1 and s.start_pos > 0 for s in self.seqs)
