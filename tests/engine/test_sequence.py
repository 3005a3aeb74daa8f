from hymt.engine.sampling import SamplingParams
from hymt.engine.sequence import Sequence, SequenceStatus


def make(prompt=(5, 6, 7), **params) -> Sequence:
    sampling = SamplingParams(**params)
    return Sequence(0, "r0", list(prompt), sampling, stop_ids=frozenset(sampling.effective_stop_ids((2,))))


def test_stop_token_finishes_without_being_kept():
    seq = make(max_tokens=10)
    assert seq.append_token(9, now=1.0) is False
    assert seq.append_token(2, now=2.0) is True
    assert seq.output_token_ids == [9]
    assert seq.finish_reason == "stop"
    assert seq.status is SequenceStatus.FINISHED
    assert seq.first_token_time == 1.0 and seq.finish_time == 2.0


def test_max_tokens_finishes_with_length():
    seq = make(max_tokens=2)
    assert not seq.append_token(9, 0.0)
    assert seq.append_token(10, 0.0)
    assert seq.finish_reason == "length"
    assert seq.output_token_ids == [9, 10]
    assert seq.prompt_token_ids == [5, 6, 7]
    assert seq.num_tokens == 5


def test_ignore_eos_generates_through_stop_ids():
    seq = make(max_tokens=3, ignore_eos=True)
    assert not seq.append_token(2, 0.0)
    assert not seq.append_token(2, 0.0)
    assert seq.append_token(2, 0.0)
    assert seq.output_token_ids == [2, 2, 2]
    assert seq.finish_reason == "length"


def test_reset_for_recompute_keeps_tokens_and_drops_kv_state():
    seq = make(max_tokens=5)
    seq.status = SequenceStatus.RUNNING
    seq.num_computed_tokens = 3
    seq.block_table = [4]
    seq.append_token(8, 0.0)
    seq.reset_for_recompute()
    assert seq.status is SequenceStatus.WAITING
    assert seq.num_computed_tokens == 0 and seq.block_table == []
    assert seq.token_ids == [5, 6, 7, 8]  # prompt + generated are recomputed together
    assert seq.num_uncomputed_tokens == 4
