"""One request's tokens and scheduling state inside the native engine."""
from __future__ import annotations

import enum
import time

from hymt.engine.outputs import FinishReason
from hymt.engine.sampling import SamplingParams


class SequenceStatus(enum.Enum):
    WAITING = "waiting"  # queued; holds no KV blocks
    RUNNING = "running"  # admitted; holds KV blocks for its computed tokens
    FINISHED = "finished"


class Sequence:
    """A request as the scheduler sees it: prompt + generated tokens, KV progress, blocks.

    `token_ids` holds prompt and generated tokens in one list so a preempted sequence can be
    recomputed from it unchanged. `num_computed_tokens` counts the tokens whose K/V the
    scheduled steps write (advanced when a step is planned); the scheduler hands out the
    difference to the logical length over one or more steps (one token per step once decoding).

    `num_pending` counts tokens sampled by planned steps whose values the host has not read
    yet (the engine overlaps the next step with that read). The logical length is
    `len(token_ids) + num_pending`; a pending token that is the next input is fed to the model
    from the device (`last_sample_row` = its row in the previous step's samples).

    Attributes:
        seq_id: engine-internal integer id (dense, cheap to hash).
        request_id: the caller's id.
        params: sampling parameters; `stop_ids` is the effective stop set
            (SamplingParams.effective_stop_ids: request + engine, empty under ignore_eos).
        seed: the seed every random draw of this sequence derives from (see sampler.py).
        block_table: physical KV blocks, in position order.
        block_hashes: chained hashes of the full blocks registered so far (prefix cache).
        num_cached_tokens: prompt tokens served from the prefix cache at the last admission.
    """

    __slots__ = (
        "seq_id", "request_id", "params", "stop_ids", "seed", "token_ids", "prompt", "num_prompt_tokens",
        "num_computed_tokens", "block_table", "block_hashes", "num_cached_tokens", "status",
        "finish_reason", "arrival_time", "first_token_time", "finish_time", "max_tokens",
        "num_pending", "last_sample_row",
    )

    def __init__(
        self,
        seq_id: int,
        request_id: str,
        prompt_token_ids: list[int],
        params: SamplingParams,
        *,
        stop_ids: frozenset[int] = frozenset(),
        seed: int = 0,
    ):
        self.seq_id = seq_id
        self.request_id = request_id
        self.params = params
        self.max_tokens = params.max_tokens
        self.stop_ids = stop_ids
        self.seed = seed
        self.prompt: list[int] = list(prompt_token_ids)  # shared by every output; never mutated
        self.token_ids: list[int] = list(self.prompt)
        self.num_prompt_tokens = len(self.prompt)
        self.num_computed_tokens = 0
        self.block_table: list[int] = []
        self.block_hashes: list[int] = []
        self.num_cached_tokens = 0
        self.num_pending = 0
        self.last_sample_row = -1
        self.status = SequenceStatus.WAITING
        self.finish_reason: FinishReason | None = None
        self.arrival_time = time.perf_counter()
        self.first_token_time: float | None = None
        self.finish_time: float | None = None

    @property
    def num_tokens(self) -> int:
        return len(self.token_ids)

    @property
    def num_output_tokens(self) -> int:
        return len(self.token_ids) - self.num_prompt_tokens

    @property
    def prompt_token_ids(self) -> list[int]:
        return self.prompt

    @property
    def output_token_ids(self) -> list[int]:
        return self.token_ids[self.num_prompt_tokens :]

    @property
    def num_uncomputed_tokens(self) -> int:
        return len(self.token_ids) + self.num_pending - self.num_computed_tokens

    @property
    def num_generated(self) -> int:
        """Generated tokens including pending ones: the index of the next token sampled is this."""
        return len(self.token_ids) + self.num_pending - self.num_prompt_tokens

    @property
    def is_finished(self) -> bool:
        return self.status is SequenceStatus.FINISHED

    def append_token(self, token_id: int, now: float) -> bool:
        """Record one sampled token; returns True when the sequence finished with it.

        A stop token ends the sequence with reason "stop" and is not kept; reaching
        max_tokens ends it with "length".
        """
        if self.first_token_time is None:
            self.first_token_time = now
        if token_id in self.stop_ids:
            self.finish("stop", now)
            return True
        self.token_ids.append(token_id)
        if len(self.token_ids) - self.num_prompt_tokens >= self.max_tokens:
            self.finish("length", now)
            return True
        return False

    def finish(self, reason: FinishReason, now: float | None = None) -> None:
        self.status = SequenceStatus.FINISHED
        self.finish_reason = reason
        self.finish_time = time.perf_counter() if now is None else now

    def reset_for_recompute(self) -> None:
        """Preempted: its KV is dropped; prompt + generated tokens are recomputed on readmission.

        A pending token stays pending: it is appended when the host reads it, before readmission.
        """
        self.status = SequenceStatus.WAITING
        self.num_computed_tokens = 0
        self.block_table = []
        self.block_hashes = []
        self.num_cached_tokens = 0

    def __repr__(self) -> str:
        return (
            f"Sequence(id={self.seq_id}, req={self.request_id!r}, status={self.status.value}, "
            f"tokens={self.num_tokens}, computed={self.num_computed_tokens}, blocks={len(self.block_table)})"
        )
