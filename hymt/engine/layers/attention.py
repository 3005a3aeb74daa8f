"""Causal GQA attention over the paged KV cache, driven by AttentionMetadata.

Paths, chosen by device:
- torch reference (CPU, and CUDA without Triton): per sequence, gather its context from the
  block table and attend its queries at positions seq_len - q_len .. seq_len - 1. Handles
  fresh prompts, prompts after a cached prefix, chunked prefill and decode alike.
- CUDA + Triton: `paged_prefill` for any step with a query longer than one token (mixed
  prefill + decode steps included), `paged_decode` (split-K) for decode-only steps. Both
  read their work from device tensors only, so both can be captured in CUDA graphs.
Scores are scaled by 1/sqrt(head_dim) and softmaxed in fp32. The cache may be narrower than
q (an fp8 cache, dtypes.kv_cache_dtype): K/V are cast to it when stored and widened back to
fp32 when read, on both paths.
"""
from __future__ import annotations

import math

import torch
from torch import nn

from hymt.engine.attention_metadata import AttentionMetadata
from hymt.engine.layers.kernel_choice import next_pow2, use_triton
from hymt.engine.layers.kv_store import read_blocks, store_kv


def triton_attention_supported(head_dim: int) -> bool:
    """The Triton kernels need power-of-two head dims of at least 16 (tl.dot, tl.arange)."""
    return head_dim >= 16 and next_pow2(head_dim) == head_dim


class Attention(nn.Module):
    """Stores the step's K/V (unless already stored by a fused kernel), then attends."""

    def __init__(self, num_heads: int, num_kv_heads: int, head_dim: int):
        super().__init__()
        if num_heads % num_kv_heads:
            raise ValueError(f"num_heads {num_heads} must be a multiple of num_kv_heads {num_kv_heads}")
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads
        self.head_dim = head_dim
        self.scale = 1.0 / math.sqrt(head_dim)

    def uses_triton(self, x: torch.Tensor) -> bool:
        return use_triton(x) and triton_attention_supported(self.head_dim)

    def forward(
        self,
        q: torch.Tensor,
        k: torch.Tensor,
        v: torch.Tensor,
        kv_cache: tuple[torch.Tensor, torch.Tensor],
        meta: AttentionMetadata,
        *,
        kv_stored: bool = False,
    ) -> torch.Tensor:
        """q [T, H, D], k/v [T, KV, D] -> [T, H, D]."""
        k_cache, v_cache = kv_cache
        if not kv_stored:
            store_kv(k, v, k_cache, v_cache, meta.slot_mapping)
        if self.uses_triton(q):
            from hymt.engine.layers import triton_attention as ta

            if meta.is_decode_only:
                return ta.paged_decode(q, k_cache, v_cache, meta.seq_lens, meta.block_tables, self.scale)
            return ta.paged_prefill(
                q, k_cache, v_cache, meta.query_start_loc, meta.seq_lens, meta.block_tables,
                meta.prefill_items, self.scale,
            )
        return paged_attention_torch(q, k_cache, v_cache, meta, self.scale)

    def extra_repr(self) -> str:
        return f"heads={self.num_heads}, kv_heads={self.num_kv_heads}, head_dim={self.head_dim}"


def paged_attention_torch(
    q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, meta: AttentionMetadata, scale: float
) -> torch.Tensor:
    """Reference path: q [T, H, D] -> [T, H, D]; one sequence at a time, fp32 math."""
    num_heads = q.shape[1]
    block_size = k_cache.shape[1]
    group = num_heads // k_cache.shape[2]
    out = torch.zeros_like(q)
    starts = meta.query_start_loc.tolist()
    for i, seq_len in enumerate(meta.seq_lens.tolist()):
        lo, hi = starts[i], starts[i + 1]
        q_len = hi - lo
        if q_len == 0 or seq_len == 0:
            continue
        blocks = meta.block_tables[i, : math.ceil(seq_len / block_size)].long()
        k = read_blocks(k_cache, blocks).flatten(0, 1)[:seq_len]  # [S, KV, D], cache dtype
        v = read_blocks(v_cache, blocks).flatten(0, 1)[:seq_len]
        k = k.to(torch.float32).repeat_interleave(group, dim=1)  # [S, H, D]
        v = v.to(torch.float32).repeat_interleave(group, dim=1)
        scores = torch.einsum("qhd,khd->hqk", q[lo:hi].to(torch.float32), k) * scale  # [H, q, S]
        q_pos = torch.arange(seq_len - q_len, seq_len, device=q.device)
        future = torch.arange(seq_len, device=q.device)[None, :] > q_pos[:, None]  # [q, S]
        scores.masked_fill_(future, float("-inf"))
        probs = torch.softmax(scores, dim=-1)
        out[lo:hi] = torch.einsum("hqk,khd->qhd", probs, v).to(q.dtype)
    return out
