import pytest

from hymt.engine.block_manager import BlockManager
from hymt.engine.config import EngineConfig
from hymt.engine.sampling import SamplingParams
from hymt.engine.scheduler import Scheduler
from hymt.engine.sequence import Sequence, SequenceStatus
from hymt.errors import InvalidInputError


def make_scheduler(num_blocks=64, block_size=4, prefix=False, **cfg) -> Scheduler:
    base = dict(max_num_seqs=8, max_num_batched_tokens=32, max_model_len=64, block_size=block_size)
    base.update(cfg)
    return Scheduler(EngineConfig(**base), BlockManager(num_blocks, block_size, enable_prefix_caching=prefix))


def make_seq(i, n_prompt, max_tokens=4, **kw) -> Sequence:
    return Sequence(i, f"r{i}", [10 + i] * n_prompt, SamplingParams(max_tokens=max_tokens, **kw))


def run_to_completion(sched: Scheduler, token=7, max_steps=500) -> list:
    """Drive the scheduler with a fake model that always samples `token`; returns the plans."""
    plans = []
    while sched.has_unfinished():
        plan = sched.schedule()
        assert not plan.is_empty or plan.preempted, "scheduler stalled"
        sched.update(plan, [token] * len(plan.sample_seqs))
        plans.append(plan)
        assert len(plans) < max_steps
    return plans


def test_running_decodes_come_before_new_prompts():
    sched = make_scheduler()
    a = make_seq(0, 5)
    sched.add(a)
    plan = sched.schedule()
    sched.update(plan, [7])
    b = make_seq(1, 6)
    sched.add(b)
    plan = sched.schedule()
    assert [s.seq_id for s in plan.batch.seqs] == [0, 1]
    decode, prefill = plan.batch.seqs
    assert decode.token_ids == [7] and decode.start_pos == 5 and decode.sample
    assert prefill.token_ids == [11] * 6 and prefill.start_pos == 0 and prefill.sample


def test_long_prompt_is_chunked_by_the_token_budget():
    sched = make_scheduler(max_num_batched_tokens=10, max_num_seqs=4)
    seq = make_seq(0, 25, max_tokens=2)
    sched.add(seq)
    chunks = []
    for _ in range(3):
        plan = sched.schedule()
        entry = plan.batch.seqs[0]
        chunks.append((entry.start_pos, len(entry.token_ids), entry.sample))
        sched.update(plan, [7] * len(plan.sample_seqs))
    assert chunks == [(0, 10, False), (10, 10, False), (20, 5, True)]
    assert seq.output_token_ids == [7]


def test_budget_and_seq_cap_limit_admission_fifo():
    sched = make_scheduler(max_num_batched_tokens=12, max_num_seqs=2)
    for i in range(4):
        sched.add(make_seq(i, 5))
    plan = sched.schedule()
    # 5 + 5 tokens fit the budget of 12, and max_num_seqs=2 stops a third (chunked) admission
    assert [(s.seq_id, len(s.token_ids)) for s in plan.batch.seqs] == [(0, 5), (1, 5)]
    assert [s.seq_id for s in sched.waiting] == [2, 3]


def test_preemption_recomputes_newest_and_loses_nothing():
    # 7 usable blocks of 4 tokens; three sequences of 8 prompt + 8 answer tokens need 12.
    sched = make_scheduler(num_blocks=8, block_size=4, max_num_batched_tokens=32)
    seqs = [make_seq(i, 8, max_tokens=8) for i in range(3)]
    for s in seqs:
        sched.add(s)
    plans = run_to_completion(sched)
    assert sched.num_preemptions > 0
    assert all(s.finish_reason == "length" and s.output_token_ids == [7] * 8 for s in seqs)
    assert sched.block_manager.num_used_blocks == 0
    # a preempted sequence comes back as one prefill over prompt + generated tokens
    recomputed = [e for p in plans for e in p.batch.seqs if e.start_pos == 0 and len(e.token_ids) > 8]
    assert recomputed and all(e.token_ids[8:] == [7] * (len(e.token_ids) - 8) for e in recomputed)


def test_preempted_goes_to_front_of_waiting():
    sched = make_scheduler(num_blocks=5, block_size=4, max_num_batched_tokens=32)
    a, b, c = (make_seq(i, 4, max_tokens=8) for i in range(3))
    for s in (a, b):
        sched.add(s)
    sched.update(sched.schedule(), [7, 7])  # a and b each hold 2 blocks now (5 tokens)
    sched.add(c)
    plan = sched.schedule()  # a and b take the last two blocks for position 4; c must wait
    assert [s.seq_id for s in plan.seqs] == [0, 1]
    sched.update(plan, [7, 7])
    for _ in range(4):  # positions 5..8; position 8 needs a third block and none is free
        plan = sched.schedule()
        sched.update(plan, [7] * len(plan.sample_seqs))
    # b, the newest running sequence, was preempted so a could grow
    assert b.status is SequenceStatus.WAITING and list(sched.waiting)[:2] == [b, c]
    assert a.status is SequenceStatus.RUNNING


def test_rejects_requests_that_can_never_fit():
    sched = make_scheduler(num_blocks=5, block_size=4, max_model_len=64)
    with pytest.raises(InvalidInputError, match="max_model_len=64") as e:
        sched.add(make_seq(0, 60, max_tokens=5))
    assert e.value.field == "max_tokens"
    with pytest.raises(InvalidInputError, match="KV cache holds only 4 blocks"):
        sched.add(make_seq(1, 10, max_tokens=10))


def test_duplicate_request_id_rejected():
    sched = make_scheduler()
    sched.add(make_seq(0, 3))
    with pytest.raises(InvalidInputError, match="already in use"):
        sched.add(make_seq(0, 3))


def test_abort_frees_blocks_at_once():
    sched = make_scheduler()
    a, b = make_seq(0, 9), make_seq(1, 9)
    sched.add(a)
    sched.update(sched.schedule(), [7])
    sched.add(b)
    used = sched.block_manager.num_used_blocks
    assert used == 3
    assert sched.abort("r0") is a
    assert a.finish_reason == "abort" and sched.block_manager.num_used_blocks == 0
    assert sched.abort("r1") is b and not sched.has_unfinished()
    assert sched.abort("unknown") is None


def test_prefix_cache_hits_skip_computed_tokens():
    sched = make_scheduler(prefix=True, block_size=4)
    shared = [3, 4, 5, 6, 7, 8, 9, 10]
    a = Sequence(0, "a", shared + [1], SamplingParams(max_tokens=1))
    sched.add(a)
    run_to_completion(sched)
    b = Sequence(1, "b", shared + [2, 2], SamplingParams(max_tokens=1))
    sched.add(b)
    plan = sched.schedule()
    entry = plan.batch.seqs[0]
    assert entry.start_pos == 8 and entry.token_ids == [2, 2]
    assert b.num_cached_tokens == 8


def test_counts_prompt_and_generated_tokens():
    sched = make_scheduler()
    for i in range(3):
        sched.add(make_seq(i, 5, max_tokens=3))
    run_to_completion(sched)
    assert sched.prompt_tokens_computed == 15
    assert sched.generated_tokens == 9


@pytest.mark.parametrize("prefix", [False, True])
def test_random_workload_keeps_every_request_and_every_block(prefix):
    import random

    rng = random.Random(1 if prefix else 2)
    sched = make_scheduler(num_blocks=24, block_size=4, prefix=prefix, max_num_seqs=6, max_num_batched_tokens=20)
    bm = sched.block_manager
    added, aborted = {}, set()
    next_id = 0
    for step in range(400):
        if step < 300 and rng.random() < 0.4:
            prompt = [rng.randrange(3) for _ in range(rng.randrange(1, 30))]  # shared prefixes are common
            seq = Sequence(next_id, f"r{next_id}", prompt, SamplingParams(max_tokens=rng.randrange(1, 12)))
            sched.add(seq)
            added[seq.request_id] = seq
            next_id += 1
        if added and rng.random() < 0.05:
            rid = rng.choice(sorted(added))
            if sched.abort(rid) is not None:
                aborted.add(rid)
        plan = sched.schedule()
        assert plan.batch.num_tokens <= 20 and len(plan.seqs) <= 6
        assert len(set(id(s) for s in plan.seqs)) == len(plan.seqs)
        for entry in plan.batch.seqs:
            assert len(entry.block_table) * 4 >= entry.start_pos + len(entry.token_ids)
            assert 0 not in entry.block_table  # the null block is never handed out
        sched.update(plan, [rng.randrange(3) for _ in plan.sample_seqs])
        held = [b for s in sched.running for b in s.block_table]
        if prefix:
            assert bm.num_used_blocks == len(set(held))
        else:
            assert bm.num_used_blocks == len(held) == len(set(held))
        if step >= 300 and not sched.has_unfinished():
            break
    assert not sched.has_unfinished() and bm.num_used_blocks == 0
    for rid, seq in added.items():
        if rid in aborted:
            assert seq.finish_reason == "abort"
        else:
            assert seq.finish_reason == "length" and len(seq.output_token_ids) == seq.params.max_tokens
    assert sched.num_preemptions > 0
