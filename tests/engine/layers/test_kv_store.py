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


def test_fp8_cache_round_trips_through_bytes():
    from hymt.engine.layers.kv_store import read_blocks

    fp8 = torch.float8_e4m3fn
    k_cache, v_cache = torch.zeros(3, BS, KV, D, dtype=fp8), torch.zeros(3, BS, KV, D, dtype=fp8)
    k, v = torch.randn(3, KV, D, dtype=torch.bfloat16), torch.randn(3, KV, D, dtype=torch.bfloat16)
    k[0, 0, :3] = torch.tensor([1000.0, -600.0, float("nan")])
    store_kv(k, v, k_cache, v_cache, torch.tensor([5, -1, 0]))  # a padding row: the masked path
    store_kv(k[1:2], v[1:2], k_cache, v_cache, torch.tensor([11]))  # all valid: the direct path
    assert k_cache.dtype == fp8
    got = read_blocks(k_cache, torch.tensor([1, 2, 0]))  # [3, BS, KV, D] fp8
    assert got.dtype == fp8 and got.shape == (3, BS, KV, D)
    assert torch.equal(got[0, 1].view(torch.uint8)[:, 3:], k[0].to(fp8).view(torch.uint8)[:, 3:])
    assert got[0, 1, 0, :2].float().tolist() == [448.0, -448.0]  # saturates, never NaN from overflow
    assert torch.isnan(got[0, 1, 0, 2].float())  # NaN stays visible
    assert torch.equal(got[1, 3].float(), k[1].to(fp8).float())
    assert torch.equal(read_blocks(v_cache, torch.tensor([0]))[0, 0].float(), v[2].to(fp8).float())
    # bf16 -> e4m3 keeps 3 mantissa bits: relative error <= 2^-4 in the normal range
    normal = v[2].abs() >= 2**-6
    rel = ((v_cache[0, 0].float() - v[2].float()).abs() / v[2].float().abs())[normal]
    assert 0 < rel.max().item() <= 2**-4
