"""Writing a step's K/V into the paged cache and reading blocks back (torch path).

On CUDA with Triton the store is fused into the RoPE/QK-norm kernel (layers/triton_rotary.py),
which is graph-safe; this torch version serves CPU and the no-Triton fallback. It skips slot -1
rows with a boolean mask, which syncs with the host, so the fallback is for eager mode only.

An fp8 cache (torch.float8_e4m3fn, no scale; see dtypes.kv_cache_dtype) is written and read
through a uint8 view of the same bytes: torch 2.13 has no CPU index_copy_ kernel for float8,
and moving bytes is exact. Values are clamped to +-FP8_KV_MAX before the cast, so overflow
saturates as the Triton store does (cvt.satfinite) instead of depending on torch's cast.
"""
from __future__ import annotations

import torch

#: Largest finite float8_e4m3fn value (torch.finfo(torch.float8_e4m3fn).max).
FP8_KV_MAX = 448.0


def is_fp8(dtype: torch.dtype) -> bool:
    """Whether a cache dtype is one of torch's 1-byte floats (stored as raw bytes here)."""
    return dtype.is_floating_point and dtype.itemsize == 1


def _bytes_if_fp8(t: torch.Tensor) -> torch.Tensor:
    return t.view(torch.uint8) if is_fp8(t.dtype) else t


def to_cache_dtype(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """x in the cache's dtype; fp8 saturates at +-FP8_KV_MAX (NaN stays NaN)."""
    if is_fp8(dtype):
        return x.clamp(-FP8_KV_MAX, FP8_KV_MAX).to(dtype)
    return x.to(dtype)


def store_kv(
    k: torch.Tensor, v: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, slot_mapping: torch.Tensor
) -> None:
    """k, v [T, KV, D] -> caches [num_blocks, block_size, KV, D] at flat slots (-1 = skip)."""
    flat_k = _bytes_if_fp8(k_cache).view(-1, k_cache.shape[2], k_cache.shape[3])  # [num_blocks * block_size, KV, D]
    flat_v = _bytes_if_fp8(v_cache).view(-1, v_cache.shape[2], v_cache.shape[3])
    new_k = _bytes_if_fp8(to_cache_dtype(k, k_cache.dtype))  # [T, KV, D]
    new_v = _bytes_if_fp8(to_cache_dtype(v, v_cache.dtype))
    valid = slot_mapping >= 0
    if bool(valid.all()):
        flat_k.index_copy_(0, slot_mapping, new_k)
        flat_v.index_copy_(0, slot_mapping, new_v)
        return
    slots = slot_mapping[valid]
    flat_k.index_copy_(0, slots, new_k[valid])
    flat_v.index_copy_(0, slots, new_v[valid])


def read_blocks(cache: torch.Tensor, blocks: torch.Tensor) -> torch.Tensor:
    """cache [num_blocks, block_size, KV, D] at block ids [n] -> [n, block_size, KV, D], cache dtype."""
    if is_fp8(cache.dtype):
        return cache.view(torch.uint8)[blocks].view(cache.dtype)
    return cache[blocks]
