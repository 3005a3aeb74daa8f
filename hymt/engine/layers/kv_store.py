"""Writing a step's K/V into the paged cache (torch path).

On CUDA with Triton the store is fused into the RoPE/QK-norm kernel (layers/triton_rotary.py),
which is graph-safe; this torch version serves CPU and the no-Triton fallback. It skips slot -1
rows with a boolean mask, which syncs with the host, so the fallback is for eager mode only.
"""
from __future__ import annotations

import torch


def store_kv(
    k: torch.Tensor, v: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, slot_mapping: torch.Tensor
) -> None:
    """k, v [T, KV, D] -> caches [num_blocks, block_size, KV, D] at flat slots (-1 = skip)."""
    flat_k = k_cache.view(-1, k_cache.shape[2], k_cache.shape[3])  # [num_blocks * block_size, KV, D]
    flat_v = v_cache.view(-1, v_cache.shape[2], v_cache.shape[3])
    valid = slot_mapping >= 0
    if bool(valid.all()):
        flat_k.index_copy_(0, slot_mapping, k.to(k_cache.dtype))
        flat_v.index_copy_(0, slot_mapping, v.to(v_cache.dtype))
        return
    slots = slot_mapping[valid]
    flat_k.index_copy_(0, slots, k[valid].to(k_cache.dtype))
    flat_v.index_copy_(0, slots, v[valid].to(v_cache.dtype))
