"""The torch reference path of paged attention."""
from __future__ import annotations

import random

import pytest
import torch
import torch.nn.functional as F

from hymt.engine.batch import ScheduledSeq, StepBatch
from hymt.engine.layers import Attention, paged_attention_torch
from hymt.engine.step_inputs import build_step_inputs

H, KV, D, BS = 4, 2, 16, 4


def dense_causal(q, k, v, q_offset):
    """q [q_len, H, D] at positions q_offset.., k/v [S, KV, D] -> [q_len, H, D] via SDPA."""
    qh, kh, vh = q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1)
    kh, vh = kh.repeat_interleave(H // KV, 0), vh.repeat_interleave(H // KV, 0)
    mask = torch.arange(k.shape[0])[None, :] <= (q_offset + torch.arange(q.shape[0]))[:, None]
    return F.scaled_dot_product_attention(qh, kh, vh, attn_mask=mask).transpose(0, 1)


def paged(contexts: list[torch.Tensor], num_blocks=32, seed=0):
    """Scatter per-sequence K (or V) [S, KV, D] into a shuffled paged cache -> (cache, tables)."""
    pool = list(range(num_blocks))
    random.Random(seed).shuffle(pool)
    cache = torch.randn(num_blocks, BS, KV, D)  # garbage everywhere else
    tables = []
    for ctx in contexts:
        table = [pool.pop() for _ in range(-(-ctx.shape[0] // BS))]
        for pos in range(ctx.shape[0]):
            cache[table[pos // BS], pos % BS] = ctx[pos]
        tables.append(tuple(table))
    return cache, tables


def metadata(lens: list[tuple[int, int]], tables: list[tuple[int, ...]]):
    """Metadata of sequences computing n tokens after s cached ones ((s, n) per sequence)."""
    batch = StepBatch([ScheduledSeq(i, [0] * n, s, list(t), True) for i, ((s, n), t) in enumerate(zip(lens, tables))])
    return build_step_inputs(batch, BS, "cpu").metadata


@pytest.mark.parametrize("lens", [[(0, 9)], [(0, 9), (5, 3), (12, 1), (0, 1)], [(7, 1), (30, 1), (1, 1)]])
def test_matches_dense_causal_attention(lens):
    """(start_pos, q_len) per sequence: fresh prompts, chunks after a prefix, decode rows."""
    torch.manual_seed(0)
    ks = [torch.randn(s + n, KV, D) for s, n in lens]
    vs = [torch.randn(s + n, KV, D) for s, n in lens]
    k_cache, tables = paged(ks)
    v_cache, v_tables = paged(vs)  # same seed: same block tables
    assert v_tables == tables
    meta = metadata(lens, tables)
    q = torch.randn(meta.positions.shape[0], H, D)
    out = paged_attention_torch(q, k_cache, v_cache, meta, D**-0.5)
    start = 0
    for (s, n), k, v in zip(lens, ks, vs):
        ref = dense_causal(q[start : start + n], k, v, s)
        assert torch.allclose(out[start : start + n], ref, atol=1e-5)
        start += n


def test_module_stores_then_attends_over_its_own_tokens():
    torch.manual_seed(3)
    attn = Attention(H, KV, D)
    q, k, v = torch.randn(6, H, D), torch.randn(6, KV, D), torch.randn(6, KV, D)
    caches = (torch.zeros(4, BS, KV, D), torch.zeros(4, BS, KV, D))
    meta = metadata([(0, 6)], [(3, 1)])
    out = attn(q, k, v, caches, meta)
    assert torch.allclose(out, dense_causal(q, k, v, 0), atol=1e-5)
    assert torch.equal(caches[0][3], k[:4]) and torch.equal(caches[0][1, :2], k[4:])


def test_gqa_requires_whole_groups():
    with pytest.raises(ValueError, match="multiple"):
        Attention(6, 4, D)
