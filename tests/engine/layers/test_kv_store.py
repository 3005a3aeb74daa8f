"""Writing a step's K/V into the paged cache (torch path)."""
from __future__ import annotations

import torch

from hymt.engine.layers import store_kv

KV, D, BS = 2, 16, 4


def test_store_skips_padding_slots():
    k_cache, v_cache = torch.zeros(3, BS, KV, D), torch.zeros(3, BS, KV, D)
    k, v = torch.randn(3, KV, D), torch.randn(3, KV, D)
    store_kv(k, v, k_cache, v_cache, torch.tensor([5, -1, 0]))
    assert torch.equal(k_cache[1, 1], k[0]) and torch.equal(v_cache[0, 0], v[2])
    assert torch.count_nonzero(k_cache) == 2 * KV * D  # nothing written for the -1 row


def test_store_casts_to_the_cache_dtype():
    k_cache, v_cache = torch.zeros(1, BS, KV, D, dtype=torch.float16), torch.zeros(1, BS, KV, D, dtype=torch.float16)
    k = torch.randn(2, KV, D)
    store_kv(k, k, k_cache, v_cache, torch.tensor([0, 1]))
    assert torch.equal(k_cache[0, :2], k.half())
