import pytest

from hymt.engine.block_manager import NULL_BLOCK, BlockManager
from hymt.engine.sampling import SamplingParams
from hymt.engine.sequence import Sequence

_ids = iter(range(10**6))


def seq_of(tokens) -> Sequence:
    i = next(_ids)
    return Sequence(i, f"r{i}", list(tokens), SamplingParams())


def admit(bm: BlockManager, seq: Sequence) -> None:
    match = bm.match_prefix(seq)
    assert bm.can_allocate(match, seq.num_tokens)
    bm.allocate(seq, match, seq.num_tokens)


def finish_compute(bm: BlockManager, seq: Sequence) -> None:
    seq.num_computed_tokens = seq.num_tokens
    bm.register_full_blocks(seq)


def test_allocate_append_free_and_null_block_reserved():
    bm = BlockManager(6, 4)
    assert bm.num_usable_blocks == 5 and bm.num_free_blocks == 5
    seq = seq_of(range(10))  # 3 blocks
    admit(bm, seq)
    assert len(seq.block_table) == 3 and NULL_BLOCK not in seq.block_table
    assert bm.num_used_blocks == 3
    seq.num_computed_tokens = 10
    assert bm.can_append(seq, 2)  # still inside block 3
    bm.append(seq, 2)
    assert len(seq.block_table) == 3
    seq.num_computed_tokens = 12
    bm.append(seq, 1)  # position 12 opens block 4
    assert len(seq.block_table) == 4
    other = seq_of(range(100, 108))
    assert not bm.can_allocate(bm.match_prefix(other), other.num_tokens)  # needs 2, 1 free
    bm.free(seq)
    assert bm.num_free_blocks == 5 and seq.block_table == []
    admit(bm, other)
    assert NULL_BLOCK not in other.block_table


def test_can_allocate_honours_reserve():
    bm = BlockManager(5, 4)
    seq = seq_of(range(8))
    match = bm.match_prefix(seq)
    assert bm.can_allocate(match, 8, reserve=2)
    assert not bm.can_allocate(match, 8, reserve=3)


def test_prefix_cache_shares_full_blocks_with_ref_counts():
    bm = BlockManager(20, 4, enable_prefix_caching=True)
    a = seq_of([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    admit(bm, a)
    finish_compute(bm, a)
    b = seq_of([1, 2, 3, 4, 5, 6, 7, 8, 99])
    match = bm.match_prefix(b)
    assert match.block_ids == tuple(a.block_table[:2]) and match.num_tokens == 8
    used = bm.num_used_blocks
    bm.allocate(b, match, b.num_tokens)
    assert b.num_computed_tokens == 8 and b.num_cached_tokens == 8
    assert bm.num_used_blocks == used + 1  # only the partial third block is new
    bm.free(a)
    assert bm.num_used_blocks == 3  # b still holds the two shared blocks + its own
    bm.free(b)
    assert bm.num_used_blocks == 0


def test_a_fully_cached_prompt_still_computes_its_last_token():
    bm = BlockManager(20, 4, enable_prefix_caching=True)
    a = seq_of(range(8))
    admit(bm, a)
    finish_compute(bm, a)
    b = seq_of(range(8))
    match = bm.match_prefix(b)
    assert match.num_tokens == 4  # the second block holds the last token: recomputed
    bm.allocate(b, match, 8)
    assert b.block_table[0] == a.block_table[0] and b.block_table[1] != a.block_table[1]


def test_hash_chains_on_the_prefix_not_just_the_block():
    bm = BlockManager(20, 4, enable_prefix_caching=True)
    a = seq_of([1, 2, 3, 4, 5, 6, 7, 8, 0])
    admit(bm, a)
    finish_compute(bm, a)
    b = seq_of([9, 9, 9, 9, 5, 6, 7, 8, 0])  # same second block after a different first block
    assert bm.match_prefix(b).num_tokens == 0


def test_freed_blocks_stay_cached_until_reused_lru():
    bm = BlockManager(4, 2, enable_prefix_caching=True)  # 3 usable blocks
    a = seq_of([1, 2, 3, 4, 5])
    admit(bm, a)
    finish_compute(bm, a)
    bm.free(a)
    again = seq_of([1, 2, 3, 4, 7])
    assert bm.match_prefix(again).num_tokens == 4  # survived the free
    filler = seq_of([40, 41, 42, 43, 44, 45])  # takes all 3 blocks: evicts the cache
    admit(bm, filler)
    bm.free(filler)
    assert bm.match_prefix(again).num_tokens == 0


def test_prefix_cache_off_never_matches():
    bm = BlockManager(20, 4, enable_prefix_caching=False)
    a = seq_of(range(9))
    admit(bm, a)
    finish_compute(bm, a)
    assert bm.match_prefix(seq_of(range(9))).num_tokens == 0


def test_reset_prefix_cache_forgets_free_blocks():
    bm = BlockManager(20, 4, enable_prefix_caching=True)
    a = seq_of(range(9))
    admit(bm, a)
    finish_compute(bm, a)
    bm.free(a)
    bm.reset_prefix_cache()
    assert bm.match_prefix(seq_of(range(9))).num_tokens == 0
    assert bm.prefix_queries > 0 and bm.prefix_hits == 0


def test_at_least_two_blocks_required():
    with pytest.raises(ValueError, match="block 0 is reserved"):
        BlockManager(1, 16)
