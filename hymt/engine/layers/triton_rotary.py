"""One Triton kernel per layer for everything between the QKV GEMM and attention.

For each token: RoPE on its q and k heads (NeoX rotate-half, fp32), the per-head QK-norm
after RoPE, in place in the fused QKV output, then K (rotated and normed) and V written to
the token's paged-cache slot (slot -1 = padding row, writes nothing). Rounds to the model
dtype where transformers does (after RoPE, before the norm weight multiply).
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from hymt.engine.layers.kernel_choice import next_pow2


@triton.jit
def _rope_norm_store_kernel(
    qkv_ptr, pos_ptr, inv_freq_ptr, qw_ptr, kw_ptr, slot_ptr, kc_ptr, vc_ptr,
    stride_t, eps,
    NUM_Q: tl.constexpr, NUM_KV: tl.constexpr, ROWS_PAD: tl.constexpr, HALF: tl.constexpr,
    USE_NORM: tl.constexpr, STORE: tl.constexpr,
):
    t = tl.program_id(0).to(tl.int64)
    D: tl.constexpr = 2 * HALF
    rows = tl.arange(0, ROWS_PAD)  # q heads, then k heads, then v heads
    cols = tl.arange(0, HALF)
    rotated = rows < NUM_Q + NUM_KV
    base = qkv_ptr + t * stride_t + rows[:, None] * D + cols[None, :]
    x1 = tl.load(base, mask=rotated[:, None], other=0.0).to(tl.float32)
    x2 = tl.load(base + HALF, mask=rotated[:, None], other=0.0).to(tl.float32)
    pos = tl.load(pos_ptr + t).to(tl.float32)
    freqs = pos * tl.load(inv_freq_ptr + cols)
    c = tl.cos(freqs)[None, :]
    s = tl.sin(freqs)[None, :]
    dt = qkv_ptr.dtype.element_ty
    y1 = (x1 * c - x2 * s).to(dt).to(tl.float32)
    y2 = (x2 * c + x1 * s).to(dt).to(tl.float32)
    if USE_NORM:
        inv = tl.rsqrt((tl.sum(y1 * y1, axis=1) + tl.sum(y2 * y2, axis=1)) / D + eps)[:, None]
        is_q = (rows < NUM_Q)[:, None]
        w1 = tl.where(is_q, tl.load(qw_ptr + cols)[None, :], tl.load(kw_ptr + cols)[None, :]).to(tl.float32)
        w2 = tl.where(is_q, tl.load(qw_ptr + HALF + cols)[None, :], tl.load(kw_ptr + HALF + cols)[None, :])
        y1 = w1 * (y1 * inv).to(dt).to(tl.float32)
        y2 = w2.to(tl.float32) * (y2 * inv).to(dt).to(tl.float32)
    tl.store(base, y1.to(dt), mask=rotated[:, None])
    tl.store(base + HALF, y2.to(dt), mask=rotated[:, None])
    if STORE:
        slot = tl.load(slot_ptr + t)
        if slot >= 0:
            # K rows come from the rotated registers; V rows are loaded unchanged.
            kv_row = rows - NUM_Q
            is_k = (rows >= NUM_Q) & rotated
            is_v = (rows >= NUM_Q + NUM_KV) & (rows < NUM_Q + 2 * NUM_KV)
            cache_off = slot * (NUM_KV * D) + kv_row[:, None] * D + cols[None, :]
            kdt = kc_ptr.dtype.element_ty
            tl.store(kc_ptr + cache_off, y1.to(kdt), mask=is_k[:, None])
            tl.store(kc_ptr + cache_off + HALF, y2.to(kdt), mask=is_k[:, None])
            v_off = cache_off - NUM_KV * D
            # Through fp32: a model-dtype -> fp8 cast is not native on every target; for a
            # bf16/fp16 cache the round trip is exact and the compiler folds it away.
            vdt = vc_ptr.dtype.element_ty
            v1 = tl.load(base, mask=is_v[:, None], other=0.0).to(tl.float32)
            v2 = tl.load(base + HALF, mask=is_v[:, None], other=0.0).to(tl.float32)
            tl.store(vc_ptr + v_off, v1.to(vdt), mask=is_v[:, None])
            tl.store(vc_ptr + v_off + HALF, v2.to(vdt), mask=is_v[:, None])


def rope_norm_store_triton(
    qkv: torch.Tensor,
    positions: torch.Tensor,
    inv_freq: torch.Tensor,
    q_norm_weight: torch.Tensor | None,
    k_norm_weight: torch.Tensor | None,
    eps: float,
    num_heads: int,
    num_kv_heads: int,
    head_dim: int,
    slot_mapping: torch.Tensor | None = None,
    k_cache: torch.Tensor | None = None,
    v_cache: torch.Tensor | None = None,
) -> None:
    """In place on qkv [T, (H + 2*KV) * D]; also stores K/V into the caches when given."""
    assert qkv.stride(-1) == 1 and head_dim % 2 == 0
    use_norm = q_norm_weight is not None
    store = k_cache is not None
    if store:
        assert k_cache.is_contiguous() and v_cache.is_contiguous()
    dummy = inv_freq
    _rope_norm_store_kernel[(qkv.shape[0],)](
        qkv, positions, inv_freq,
        q_norm_weight if use_norm else dummy, k_norm_weight if use_norm else dummy,
        slot_mapping if store else positions, k_cache if store else qkv, v_cache if store else qkv,
        qkv.stride(0), eps,
        NUM_Q=num_heads, NUM_KV=num_kv_heads, ROWS_PAD=next_pow2(num_heads + 2 * num_kv_heads),
        HALF=head_dim // 2, USE_NORM=use_norm, STORE=store, num_warps=4,
    )
