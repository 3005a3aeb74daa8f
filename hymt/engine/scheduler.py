"""Token-budget continuous batching with preemption by recompute.

Each step hands out at most `max_num_batched_tokens` tokens so that every sequence's computed
tokens catch up with its known tokens:

1. Running sequences, oldest first: a decoding sequence gets its one token, a sequence whose
   prompt was chunked gets its next chunk (as much as the budget allows). Because admission
   appends and the budget is >= max_num_seqs, every decode fits before any prompt chunk.
2. When a running sequence needs a KV block and none is free, the newest running sequence is
   preempted: its blocks are freed and it goes back to the front of the waiting queue, to be
   recomputed (prompt + generated tokens) on readmission. Nothing accepted is ever dropped.
3. Waiting sequences are admitted FIFO while sequence slots, blocks and budget last; a prompt
   longer than the remaining budget is computed in chunks over several steps.
"""
from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field

from hymt.engine.batch import ScheduledSeq, StepBatch
from hymt.engine.block_manager import BlockManager
from hymt.engine.config import EngineConfig
from hymt.engine.sequence import Sequence, SequenceStatus
from hymt.errors import InvalidInputError


@dataclass
class SchedulerOutput:
    """One step's plan.

    Attributes:
        batch: the hand-off to the model runner.
        seqs: the Sequence behind each entry of batch.seqs (same order).
        sample_seqs: the sequences whose logits are sampled this step, in batch order
            (the rows of the runner's logits).
        preempted: sequences preempted while planning (their sampler state must be dropped).
        deferred_dst / deferred_src: input tokens the host does not know yet: flat token
            index in this step <- row of the previous step's sampled ids (overlapped steps).
    """

    batch: StepBatch
    seqs: list[Sequence]
    sample_seqs: list[Sequence]
    preempted: list[Sequence] = field(default_factory=list)
    deferred_dst: list[int] = field(default_factory=list)
    deferred_src: list[int] = field(default_factory=list)

    @property
    def is_empty(self) -> bool:
        return not self.seqs


@dataclass
class StepResult:
    """What applying a step changed: (sequence, sampled token) pairs, and who finished."""

    progressed: list[tuple[Sequence, int]]
    finished: list[Sequence]


class _PlanBuilder:
    """Accumulates a step's entries; commits each sequence's progress as it is planned."""

    __slots__ = ("entries", "seqs", "sample_seqs", "dst", "src", "offset", "prompt_tokens")

    def __init__(self) -> None:
        self.entries: list[ScheduledSeq] = []
        self.seqs: list[Sequence] = []
        self.sample_seqs: list[Sequence] = []
        self.dst: list[int] = []
        self.src: list[int] = []
        self.offset = 0
        self.prompt_tokens = 0

    def add(self, seq: Sequence, n: int) -> None:
        start = seq.num_computed_tokens
        end = start + n
        tokens = seq.token_ids
        known = len(tokens)
        if end <= known:
            ids = tokens[start:end]
        else:  # the last input was sampled by the previous step and is still on the device
            ids = tokens[start:known] + [0]
            self.dst.append(self.offset + n - 1)
            self.src.append(seq.last_sample_row)
        sample = end == known + seq.num_pending
        self.entries.append(ScheduledSeq(seq.seq_id, ids, start, seq.block_table, sample))
        self.seqs.append(seq)
        seq.num_computed_tokens = end
        if sample:
            seq.num_pending += 1
            seq.last_sample_row = len(self.sample_seqs)
            self.sample_seqs.append(seq)
        if n > 1 or end <= seq.num_prompt_tokens:
            self.prompt_tokens += n
        self.offset += n

    def build(self, preempted: list[Sequence]) -> SchedulerOutput:
        return SchedulerOutput(StepBatch(self.entries), self.seqs, self.sample_seqs, preempted, self.dst, self.src)


class Scheduler:
    """Owns the waiting queue and the running batch; plans steps and applies their results."""

    def __init__(self, config: EngineConfig, block_manager: BlockManager):
        self.config = config
        self.block_manager = block_manager
        self.waiting: deque[Sequence] = deque()
        self.running: list[Sequence] = []
        self._by_request: dict[str, Sequence] = {}
        # Admission keeps ~1% of the blocks free while others run, so a fresh admission does
        # not force a preemption on the very next decode step.
        self._watermark = max(1, block_manager.num_usable_blocks // 100)
        self.num_preemptions = 0
        self.prompt_tokens_computed = 0
        self.generated_tokens = 0
        self.generation_steps = 0  # steps that generated a token: tokens / steps = mean batch

    # -- requests ---------------------------------------------------------------------------
    def check_fits(self, num_prompt_tokens: int, max_tokens: int) -> None:
        """Reject a request that could never complete in this engine."""
        total = num_prompt_tokens + max_tokens
        if total > self.config.max_model_len:
            raise InvalidInputError(
                f"prompt ({num_prompt_tokens} tokens) + max_tokens ({max_tokens}) = {total} exceeds "
                f"max_model_len={self.config.max_model_len}; shorten the prompt, lower max_tokens or "
                "raise max_model_len",
                field="max_tokens",
            )
        bm = self.block_manager
        need = bm.blocks_for(total)
        if need > bm.num_usable_blocks:
            raise InvalidInputError(
                f"prompt + max_tokens = {total} tokens needs {need} KV blocks of {bm.block_size} tokens "
                f"but the KV cache holds only {bm.num_usable_blocks} blocks "
                f"({bm.num_usable_blocks * bm.block_size} tokens); raise num_kv_blocks or the memory "
                "budget, or lower max_tokens",
                field="max_tokens",
            )

    def add(self, seq: Sequence) -> None:
        if seq.request_id in self._by_request:
            raise InvalidInputError(f"request id {seq.request_id!r} is already in use", field="request_id")
        self.check_fits(seq.num_prompt_tokens, seq.max_tokens)
        self._by_request[seq.request_id] = seq
        self.waiting.append(seq)

    def abort(self, request_id: str) -> Sequence | None:
        """Remove a request now, freeing its blocks; returns it (finished "abort") or None."""
        seq = self._by_request.pop(request_id, None)
        if seq is None:
            return None
        if seq.status is SequenceStatus.RUNNING:
            self.running.remove(seq)
            self.block_manager.free(seq)
        else:
            self.waiting.remove(seq)
        seq.finish("abort")
        return seq

    def has_unfinished(self) -> bool:
        return bool(self.waiting or self.running)

    # -- planning ---------------------------------------------------------------------------
    def schedule(self) -> SchedulerOutput:
        """Plan the next step and commit it: planned tokens count as computed from now on."""
        plan = _PlanBuilder()
        preempted: list[Sequence] = []
        budget = self._schedule_running(self.config.max_num_batched_tokens, plan, preempted)
        if not preempted:
            self._admit_waiting(budget, plan)
        self.prompt_tokens_computed += plan.prompt_tokens
        return plan.build(preempted)

    def _schedule_running(self, budget: int, plan: _PlanBuilder, preempted: list[Sequence]) -> int:
        bm = self.block_manager
        bs = bm.block_size
        running = self.running
        i = 0
        while i < len(running):
            seq = running[i]
            i += 1
            n = len(seq.token_ids) + seq.num_pending - seq.num_computed_tokens
            if n > budget:
                n = budget
            # Nothing to do, or its last token is already in flight (it finishes on arrival).
            if n == 0 or seq.num_generated >= seq.max_tokens:
                continue
            # Inline of can_append/append for the common case: no new block needed.
            if seq.num_computed_tokens + n > len(seq.block_table) * bs:
                while not bm.can_append(seq, n):
                    victim = running.pop()
                    self._preempt(victim)
                    preempted.append(victim)
                    if victim is seq:
                        break
                if seq.status is not SequenceStatus.RUNNING:
                    break  # seq was the newest and preempted itself
                bm.append(seq, n)
            plan.add(seq, n)
            budget -= n
        return budget

    def _admit_waiting(self, budget: int, plan: _PlanBuilder) -> None:
        bm = self.block_manager
        waiting = self.waiting
        running = self.running
        max_seqs = self.config.max_num_seqs
        while waiting and budget > 0 and len(running) < max_seqs:
            seq = waiting[0]
            if seq.num_pending:
                break  # preempted with a token in flight: readmit once it has arrived
            match = bm.match_prefix(seq)
            n = min(seq.num_tokens - match.num_tokens, budget)
            reserve = self._watermark if running else 0
            if not bm.can_allocate(match, match.num_tokens + n, reserve=reserve):
                break
            waiting.popleft()
            bm.allocate(seq, match, match.num_tokens + n)
            seq.status = SequenceStatus.RUNNING
            running.append(seq)
            plan.add(seq, n)
            budget -= n

    def _preempt(self, seq: Sequence) -> None:
        self.block_manager.free(seq)
        seq.reset_for_recompute()
        self.waiting.appendleft(seq)
        self.num_preemptions += 1

    # -- results ----------------------------------------------------------------------------
    def update(self, out: SchedulerOutput, sampled: list[int], now: float | None = None) -> StepResult:
        """Apply a step's sampled tokens (one per `out.sample_seqs`); retire finished sequences.

        Sequences finished meanwhile (aborted, or stopped by an earlier step's token while
        this step was in flight) are skipped. Finished sequences' blocks are freed.
        """
        now = time.perf_counter() if now is None else now
        bm = self.block_manager
        running_state = SequenceStatus.RUNNING
        if bm.enable_prefix_caching:  # before finished sequences free their blocks
            bs = bm.block_size
            for seq in out.seqs:
                # cheap test first: register only when a block became full of known tokens
                if (seq.status is running_state
                        and min(seq.num_computed_tokens, len(seq.token_ids)) // bs > len(seq.block_hashes)):
                    bm.register_full_blocks(seq)
        finished: list[Sequence] = []
        progressed: list[tuple[Sequence, int]] = []
        done_state = SequenceStatus.FINISHED
        for seq, token in zip(out.sample_seqs, sampled):
            status = seq.status
            if status is done_state:
                continue
            progressed.append((seq, token))
            seq.num_pending -= 1
            if seq.append_token(token, now):
                finished.append(seq)
                self._retire(seq, status is running_state)
        self.generated_tokens += len(progressed)
        self.generation_steps += bool(progressed)
        if finished:
            self.running = [s for s in self.running if s.status is running_state]
        return StepResult(progressed, finished)

    def _retire(self, seq: Sequence, was_running: bool) -> None:
        del self._by_request[seq.request_id]
        if was_running:
            self.block_manager.free(seq)
        else:  # preempted while its last token was in flight
            self.waiting.remove(seq)
