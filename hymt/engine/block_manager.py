"""Paged KV blocks: allocation with reference counts, and a prefix cache of full blocks.

Block 0 is reserved as the null ("trash") block: never handed to a sequence, it is where
padded CUDA-graph rows and unused block-table entries point, so a padded row that writes or
reads KV touches nothing a real sequence owns.

Prefix cache: once a block is full and its K/V computed, it is registered under a chained
hash of (hash of the previous block, its tokens). A later sequence whose first blocks hash the
same reuses those blocks (reference count + 1) instead of recomputing them. Freed blocks keep
their contents and hash until the allocator reuses them, oldest freed first (LRU), so a
prefix shared by consecutive requests survives between them.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from hymt.engine.sequence import Sequence

NULL_BLOCK = 0


@dataclass(frozen=True)
class PrefixMatch:
    """Cached blocks a waiting sequence can start from.

    Attributes:
        block_ids: physical blocks holding the sequence's first len(block_ids) full blocks.
        hashes: their chained hashes.
        num_tokens: tokens covered (len(block_ids) * block_size).
        num_new_free: how many of those blocks sit unreferenced in the free list (taking them
            reduces the free count like a fresh allocation would).
    """

    block_ids: tuple[int, ...] = ()
    hashes: tuple[int, ...] = ()
    num_tokens: int = 0
    num_new_free: int = 0


EMPTY_MATCH = PrefixMatch()


class BlockManager:
    """Owns the KV block pool of `num_blocks` blocks (block 0 reserved) of `block_size` tokens."""

    def __init__(self, num_blocks: int, block_size: int, *, enable_prefix_caching: bool = False):
        if num_blocks < 2:
            raise ValueError(f"num_blocks must be >= 2 (block 0 is reserved), got {num_blocks}")
        self.num_blocks = num_blocks
        self.block_size = block_size
        self.enable_prefix_caching = enable_prefix_caching
        self._ref = [0] * num_blocks
        self._ref[NULL_BLOCK] = 1  # pinned forever
        self._hash: list[int | None] = [None] * num_blocks
        self._tokens: list[tuple[int, ...] | None] = [None] * num_blocks
        self._cached: dict[int, int] = {}  # chained hash -> block id
        # Free blocks in LRU order (popitem(last=False) takes the oldest).
        self._free: OrderedDict[int, None] = OrderedDict((b, None) for b in range(1, num_blocks))
        self.prefix_queries = 0  # full blocks looked up
        self.prefix_hits = 0  # full blocks found

    # -- capacity ---------------------------------------------------------------------------
    @property
    def num_usable_blocks(self) -> int:
        return self.num_blocks - 1

    @property
    def num_free_blocks(self) -> int:
        return len(self._free)

    @property
    def num_used_blocks(self) -> int:
        return self.num_usable_blocks - len(self._free)

    def blocks_for(self, num_tokens: int) -> int:
        return -(-num_tokens // self.block_size)

    # -- prefix cache ----------------------------------------------------------------------
    def match_prefix(self, seq: Sequence) -> PrefixMatch:
        """Longest run of cached full blocks at the start of `seq`, leaving >= 1 token to compute."""
        if not self.enable_prefix_caching:
            return EMPTY_MATCH
        bs = self.block_size
        tokens = seq.token_ids
        # The last token is always computed (its logits are needed), so a prompt that is an
        # exact multiple of block_size can match at most all but its last block.
        max_blocks = (len(tokens) - 1) // bs
        ids: list[int] = []
        hashes: list[int] = []
        prev = 0
        num_new_free = 0
        for i in range(max_blocks):
            chunk = tuple(tokens[i * bs : (i + 1) * bs])
            h = hash((prev, chunk))
            self.prefix_queries += 1
            bid = self._cached.get(h)
            if bid is None or self._tokens[bid] != chunk:
                self.prefix_queries += max_blocks - i - 1
                break
            self.prefix_hits += 1
            ids.append(bid)
            hashes.append(h)
            if self._ref[bid] == 0:
                num_new_free += 1
            prev = h
        if not ids:
            return EMPTY_MATCH
        return PrefixMatch(tuple(ids), tuple(hashes), len(ids) * bs, num_new_free)

    def register_full_blocks(self, seq: Sequence) -> None:
        """Register the blocks of `seq` that became full with computed K/V since the last call.

        Call it only once the steps computing them have been launched before any step that
        could read them (the engine calls it when applying a step's results).
        """
        if not self.enable_prefix_caching:
            return
        bs = self.block_size
        # Only blocks whose tokens the host knows (a pending token is not hashable yet).
        n_full = min(seq.num_computed_tokens, len(seq.token_ids)) // bs
        hashes = seq.block_hashes
        if len(hashes) >= n_full:
            return
        prev = hashes[-1] if hashes else 0
        tokens = seq.token_ids
        for i in range(len(hashes), n_full):
            chunk = tuple(tokens[i * bs : (i + 1) * bs])
            h = hash((prev, chunk))
            hashes.append(h)
            bid = seq.block_table[i]
            if h not in self._cached and self._hash[bid] is None:
                self._cached[h] = bid
                self._hash[bid] = h
                self._tokens[bid] = chunk
            prev = h

    # -- allocation -------------------------------------------------------------------------
    def can_allocate(self, match: PrefixMatch, num_tokens: int, *, reserve: int = 0) -> bool:
        """Whether a waiting sequence can get blocks for its first `num_tokens` tokens.

        `reserve` free blocks must remain afterwards (headroom for running sequences' decodes).
        """
        new_blocks = self.blocks_for(num_tokens) - len(match.block_ids)
        return new_blocks + match.num_new_free + reserve <= len(self._free)

    def allocate(self, seq: Sequence, match: PrefixMatch, num_tokens: int) -> None:
        """Give a waiting `seq` the matched prefix blocks plus fresh blocks up to `num_tokens`."""
        assert not seq.block_table, f"{seq} already holds blocks"
        for bid in match.block_ids:
            if self._ref[bid] == 0:
                del self._free[bid]
            self._ref[bid] += 1
        table = list(match.block_ids)
        for _ in range(self.blocks_for(num_tokens) - len(table)):
            table.append(self._take_free())
        seq.block_table = table
        seq.block_hashes = list(match.hashes)
        seq.num_computed_tokens = match.num_tokens
        seq.num_cached_tokens = match.num_tokens

    def can_append(self, seq: Sequence, num_new_tokens: int) -> bool:
        """Whether `seq` can grow by `num_new_tokens` computed tokens."""
        need = self.blocks_for(seq.num_computed_tokens + num_new_tokens) - len(seq.block_table)
        return need <= len(self._free)

    def append(self, seq: Sequence, num_new_tokens: int) -> None:
        """Add the blocks `seq` needs to hold `num_new_tokens` more tokens."""
        table = seq.block_table
        for _ in range(self.blocks_for(seq.num_computed_tokens + num_new_tokens) - len(table)):
            table.append(self._take_free())

    def free(self, seq: Sequence) -> None:
        """Release every block of `seq` (tail first, so shared prefixes are evicted last)."""
        for bid in reversed(seq.block_table):
            ref = self._ref[bid] - 1
            self._ref[bid] = ref
            if ref == 0:
                self._free[bid] = None
        seq.block_table = []
        seq.block_hashes = []

    def _take_free(self) -> int:
        bid, _ = self._free.popitem(last=False)
        h = self._hash[bid]
        if h is not None:  # evict its cached contents
            if self._cached.get(h) == bid:
                del self._cached[h]
            self._hash[bid] = None
            self._tokens[bid] = None
        self._ref[bid] = 1
        return bid

    def reset_prefix_cache(self) -> None:
        """Forget every cached block (contents of free blocks become unreachable)."""
        self._cached.clear()
        for bid in range(1, self.num_blocks):
            if self._ref[bid] == 0:
                self._hash[bid] = None
                self._tokens[bid] = None
