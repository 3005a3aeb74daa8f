"""Graph buckets: which step sizes get a graph, and which graph a step runs in."""
from hymt.engine.cuda_graph import bucket_for, graph_buckets, token_graph_buckets


def test_graph_buckets():
    b = graph_buckets(512)
    assert b[:7] == [1, 2, 4, 8, 16, 24, 32] and b[-1] == 512
    assert b == sorted(set(b))
    assert all((hi - lo) / hi <= 0.2 for lo, hi in zip(b[6:], b[7:]))
    assert graph_buckets(20) == [1, 2, 4, 8, 16, 20]
    assert graph_buckets(1000)[-1] == 1000 and graph_buckets(0) == []


def test_bucket_for():
    b = graph_buckets(512)
    assert bucket_for(1, b) == 1 and bucket_for(3, b) == 4 and bucket_for(17, b) == 24
    assert bucket_for(512, b) == 512 and bucket_for(513, b) is None


def test_token_graph_buckets():
    b = token_graph_buckets(2048)
    assert b[:5] == [16, 32, 64, 96, 128] and b[-1] == 2048 and b == sorted(set(b))
    assert all((hi - lo) / hi <= 1 / 3 for lo, hi in zip(b[3:], b[4:]))  # padding at most a third
    assert token_graph_buckets(100) == [16, 32, 64, 96, 100]
    assert token_graph_buckets(8) == [] and token_graph_buckets(0) == []


def test_the_prefill_work_list_bound_holds_for_any_split_of_the_tokens():
    import random

    from hymt.engine.attention_metadata import PREFILL_QUERY_BLOCK, prefill_item_bound

    rng = random.Random(0)
    for _ in range(500):
        tokens = rng.randrange(1, 300)
        seqs = rng.randrange(1, tokens + 1)
        cuts = sorted(rng.sample(range(1, tokens), seqs - 1)) if seqs > 1 else []
        q_lens = [b - a for a, b in zip([0, *cuts], [*cuts, tokens])]
        needed = sum(-(-q // PREFILL_QUERY_BLOCK) for q in q_lens)
        assert needed <= prefill_item_bound(tokens, seqs)
