"""Step counts by graph or eager, and the padding rows graphs compute."""
from hymt.engine.step_kinds import StepKindCounter, StepKinds


def test_each_step_counts_once_with_its_bucket_padding():
    counter = StepKindCounter()
    counter.record(decode_bucket=8, token_bucket=None, num_tokens=5)  # 5 rows in the 8-row decode graph
    counter.record(decode_bucket=None, token_bucket=64, num_tokens=50)  # a prefill step in the 64-token graph
    counter.record(decode_bucket=None, token_bucket=None, num_tokens=3000)  # past the largest graph
    assert counter.snapshot() == StepKinds(decode_graph=1, step_graph=1, eager=1, tokens=3055,
                                              padding_tokens=3 + 14)
    assert counter.snapshot().steps == 3


def test_since_gives_the_steps_of_one_run():
    counter = StepKindCounter()
    counter.record(decode_bucket=4, token_bucket=None, num_tokens=4)
    before = counter.snapshot()
    counter.record(decode_bucket=None, token_bucket=32, num_tokens=20)
    counter.record(decode_bucket=None, token_bucket=None, num_tokens=7)
    assert counter.snapshot().since(before) == StepKinds(decode_graph=0, step_graph=1, eager=1, tokens=27,
                                                                   padding_tokens=12)


def test_describe_gives_the_padding_share_of_the_rows_graphs_computed():
    kinds = StepKinds(decode_graph=3, step_graph=1, eager=2, tokens=75, padding_tokens=25)
    # 75 real tokens + 25 padding rows: a quarter of the rows computed was padding
    assert kinds.describe() == "6 steps: 3 decode graph, 1 step graph, 2 eager; padding 25.0 % of the rows computed"
    assert StepKinds(eager=4, tokens=100).describe() == "4 steps: 0 decode graph, 0 step graph, 4 eager"
