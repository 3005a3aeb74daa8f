"""Decode graph buckets: which batch sizes get a graph, and which graph a batch runs in."""
from hymt.engine.cuda_graph import bucket_for, graph_buckets


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
