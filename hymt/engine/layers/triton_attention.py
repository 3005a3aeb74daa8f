"""Triton paged attention over the block-table KV cache.

Two kernels (both GQA-aware: one program serves a KV head and all its query heads, so each
K/V tile is read once per group, not once per query head):
- `paged_prefill`: packed variable-length causal attention; a sequence's queries may start
  after a cached prefix (prefix cache, chunked prefill) and decode rows may ride along. Its
  grid is the step's work list (AttentionMetadata.prefill_items), read on the device, so a
  CUDA graph captured over a padded list serves any step of up to its token count.
- `paged_decode`: one query per sequence, split-K over the context with a reduce kernel.
  Its grid depends only on the number of sequences and the block-table width, never on
  context lengths, and it syncs nothing with the host: safe to capture in a CUDA graph.
K/V tiles are gathered token by token through the block table, so any block size works.
The cache may be in a narrower dtype than q (fp8 e4m3, no scale: dtypes.kv_cache_dtype);
tiles are widened to fp32 on load, then rounded to q's dtype for tl.dot (exact for fp8 and
for a cache in q's own dtype, where the compiler folds the round trip away).
Softmax runs in fp32 with exp2 (scores pre-scaled by log2 e).
"""
from __future__ import annotations

import functools
import math

import torch
import triton
import triton.language as tl

from hymt.engine.attention_metadata import PREFILL_QUERY_BLOCK
from hymt.engine.layers.kernel_choice import next_pow2

_LOG2E = 1.4426950408889634
_MAX_SPLITS = 16


@triton.jit
def _kv_tile(cache_ptr, bt_row_ptr, n, n_mask, kvh, d, stride_b, stride_s, stride_h, BLOCK_SIZE: tl.constexpr):
    """Gather K or V rows for context positions n [BLOCK_N] -> [BLOCK_N, D] fp32."""
    blk = tl.load(bt_row_ptr + n // BLOCK_SIZE, mask=n_mask, other=0).to(tl.int64)
    ptrs = cache_ptr + blk[:, None] * stride_b + (n % BLOCK_SIZE)[:, None] * stride_s + kvh * stride_h + d[None, :]
    return tl.load(ptrs, mask=n_mask[:, None], other=0.0).to(tl.float32)


@triton.jit
def _prefill_kernel(
    q_ptr, k_cache_ptr, v_cache_ptr, out_ptr, qsl_ptr, seq_lens_ptr, bt_ptr, items_ptr,
    scale_log2,
    stride_qt, stride_qh, stride_ot, stride_oh,
    stride_kb, stride_ks, stride_kh, stride_vb, stride_vs, stride_vh, stride_bt,
    GROUP: tl.constexpr, GROUP_PAD: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_SIZE: tl.constexpr,
    BLOCK_Q: tl.constexpr, BLOCK_N: tl.constexpr, PRECISION: tl.constexpr,
):
    item = tl.program_id(0)
    kvh = tl.program_id(1)
    seq = tl.load(items_ptr + 2 * item)
    qb = tl.load(items_ptr + 2 * item + 1)
    q_start = tl.load(qsl_ptr + seq)
    q_len = tl.load(qsl_ptr + seq + 1) - q_start
    if qb * BLOCK_Q >= q_len:
        return
    seq_len = tl.load(seq_lens_ptr + seq)
    ctx_start = seq_len - q_len  # tokens of this sequence already in the cache before the chunk
    BLOCK_M: tl.constexpr = BLOCK_Q * GROUP_PAD
    r = tl.arange(0, BLOCK_M)
    tok = qb * BLOCK_Q + r // GROUP_PAD  # rows are (token, query head of the group) pairs
    g = r % GROUP_PAD
    row_ok = (tok < q_len) & (g < GROUP)
    head = kvh * GROUP + g
    d = tl.arange(0, HEAD_DIM)
    q_row = (q_start + tok).to(tl.int64)
    q = tl.load(q_ptr + q_row[:, None] * stride_qt + head[:, None] * stride_qh + d[None, :],
                mask=row_ok[:, None], other=0.0)
    q_pos = ctx_start + tok
    kv_end = tl.minimum(seq_len, ctx_start + (qb + 1) * BLOCK_Q)
    bt_row = bt_ptr + seq.to(tl.int64) * stride_bt
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    for start in range(0, kv_end, BLOCK_N):
        n = start + tl.arange(0, BLOCK_N)
        n_mask = n < kv_end
        k = _kv_tile(k_cache_ptr, bt_row, n, n_mask, kvh, d, stride_kb, stride_ks, stride_kh, BLOCK_SIZE)
        s = tl.dot(q, tl.trans(k.to(q.dtype)), input_precision=PRECISION) * scale_log2
        s = tl.where(n_mask[None, :] & (n[None, :] <= q_pos[:, None]), s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = _kv_tile(v_cache_ptr, bt_row, n, n_mask, kvh, d, stride_vb, stride_vs, stride_vh, BLOCK_SIZE)
        acc = acc * alpha[:, None] + tl.dot(p.to(q.dtype), v.to(q.dtype), input_precision=PRECISION)
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(out_ptr + q_row[:, None] * stride_ot + head[:, None] * stride_oh + d[None, :],
             out.to(out_ptr.dtype.element_ty), mask=row_ok[:, None])


@triton.jit
def _decode_kernel(
    q_ptr, k_cache_ptr, v_cache_ptr, out_ptr, part_acc_ptr, part_ml_ptr, seq_lens_ptr, bt_ptr,
    scale_log2,
    stride_qt, stride_qh, stride_ot, stride_oh,
    stride_kb, stride_ks, stride_kh, stride_vb, stride_vs, stride_vh, stride_bt,
    NUM_HEADS: tl.constexpr, GROUP: tl.constexpr, GROUP_PAD: tl.constexpr, HEAD_DIM: tl.constexpr,
    BLOCK_SIZE: tl.constexpr, BLOCK_N: tl.constexpr, NUM_SPLITS: tl.constexpr, PRECISION: tl.constexpr,
):
    seq = tl.program_id(0)
    kvh = tl.program_id(1)
    split = tl.program_id(2)
    seq_len = tl.load(seq_lens_ptr + seq)
    g = tl.arange(0, GROUP_PAD)
    g_ok = g < GROUP
    head = kvh * GROUP + g
    d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + seq.to(tl.int64) * stride_qt + head[:, None] * stride_qh + d[None, :],
                mask=g_ok[:, None], other=0.0)
    num_tiles = tl.cdiv(seq_len, BLOCK_N)
    per_split = tl.cdiv(num_tiles, NUM_SPLITS)
    tile_lo = split * per_split
    tile_hi = tl.minimum(tile_lo + per_split, num_tiles)
    bt_row = bt_ptr + seq.to(tl.int64) * stride_bt
    m_i = tl.full([GROUP_PAD], float("-inf"), tl.float32)
    l_i = tl.zeros([GROUP_PAD], tl.float32)
    acc = tl.zeros([GROUP_PAD, HEAD_DIM], tl.float32)
    for tile in range(tile_lo, tile_hi):
        n = tile * BLOCK_N + tl.arange(0, BLOCK_N)
        n_mask = n < seq_len
        k = _kv_tile(k_cache_ptr, bt_row, n, n_mask, kvh, d, stride_kb, stride_ks, stride_kh, BLOCK_SIZE)
        s = tl.dot(q, tl.trans(k.to(q.dtype)), input_precision=PRECISION) * scale_log2
        s = tl.where(n_mask[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = _kv_tile(v_cache_ptr, bt_row, n, n_mask, kvh, d, stride_vb, stride_vs, stride_vh, BLOCK_SIZE)
        acc = acc * alpha[:, None] + tl.dot(p.to(q.dtype), v.to(q.dtype), input_precision=PRECISION)
        m_i = m_new
    if NUM_SPLITS == 1:
        # Padding rows (seq_len 0) never enter the loop: write zeros, not 0/0.
        out = acc / tl.maximum(l_i, 1e-30)[:, None]
        tl.store(out_ptr + seq.to(tl.int64) * stride_ot + head[:, None] * stride_oh + d[None, :],
                 out.to(out_ptr.dtype.element_ty), mask=g_ok[:, None])
    else:
        # Partials laid out [T, H, NUM_SPLITS, D] and [T, H, NUM_SPLITS, 2] (m, l).
        row = (seq.to(tl.int64) * NUM_HEADS + head) * NUM_SPLITS + split
        tl.store(part_acc_ptr + row[:, None] * HEAD_DIM + d[None, :], acc, mask=g_ok[:, None])
        tl.store(part_ml_ptr + row * 2, m_i, mask=g_ok)
        tl.store(part_ml_ptr + row * 2 + 1, l_i, mask=g_ok)


@triton.jit
def _decode_reduce_kernel(
    part_acc_ptr, part_ml_ptr, out_ptr, stride_ot, stride_oh,
    NUM_HEADS: tl.constexpr, HEAD_DIM: tl.constexpr, NUM_SPLITS: tl.constexpr,
):
    seq = tl.program_id(0).to(tl.int64)
    head = tl.program_id(1)
    sp = tl.arange(0, NUM_SPLITS)
    row = (seq * NUM_HEADS + head) * NUM_SPLITS + sp
    m = tl.load(part_ml_ptr + row * 2)
    sums = tl.load(part_ml_ptr + row * 2 + 1)  # each split's softmax denominator
    m_max = tl.max(m, axis=0)
    # Empty splits carry m = -inf, sum 0: weight 0 (guarding -inf - -inf = nan).
    w = tl.where(m == float("-inf"), 0.0, tl.exp2(m - tl.where(m_max == float("-inf"), 0.0, m_max)))
    d = tl.arange(0, HEAD_DIM)
    acc = tl.load(part_acc_ptr + row[:, None] * HEAD_DIM + d[None, :])
    num = tl.sum(acc * w[:, None], axis=0)
    den = tl.maximum(tl.sum(sums * w, axis=0), 1e-30)
    tl.store(out_ptr + seq * stride_ot + head * stride_oh + d, (num / den).to(out_ptr.dtype.element_ty))


@functools.lru_cache(maxsize=8)
def _sm_count(device_index: int) -> int:
    return torch.cuda.get_device_properties(device_index).multi_processor_count


def decode_num_splits(num_seqs: int, num_kv_heads: int, max_context: int, block_n: int, device: torch.device) -> int:
    """Splits per (sequence, KV head) so that small batches still fill the GPU.

    Depends only on static shapes (batch size, block-table width), so one CUDA graph per
    batch bucket stays valid for any context length up to the table's capacity.
    """
    programs = num_seqs * num_kv_heads
    sms = _sm_count(device.index or 0) if device.type == "cuda" else 1
    max_tiles = max(1, math.ceil(max_context / block_n))
    if programs >= 2 * sms or max_tiles == 1:
        return 1
    splits = min(math.ceil(2 * sms / programs), max_tiles, _MAX_SPLITS)
    return next_pow2(splits) if next_pow2(splits) <= _MAX_SPLITS else _MAX_SPLITS


def _precision(dtype: torch.dtype) -> str:
    # fp32 models get exact fp32 dots (tf32 would cost ~1e-3 relative error).
    return "ieee" if dtype == torch.float32 else "tf32"


def _cache_strides(k_cache: torch.Tensor, v_cache: torch.Tensor) -> tuple[int, ...]:
    assert k_cache.stride(-1) == 1 and v_cache.stride(-1) == 1
    return (k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
            v_cache.stride(0), v_cache.stride(1), v_cache.stride(2))


def paged_prefill(
    q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, query_start_loc: torch.Tensor,
    seq_lens: torch.Tensor, block_tables: torch.Tensor, prefill_items: torch.Tensor, scale: float,
    *, block_n: int = 64,
) -> torch.Tensor:
    """q [T, H, D] packed by query_start_loc -> out [T, H, D]; K/V already in the cache.

    prefill_items [num_items, 2] int32 (AttentionMetadata.prefill_items): one program per item
    and KV head, so the grid follows the work list, never the host's view of query lengths.
    """
    t, h, dim = q.shape
    kv = k_cache.shape[2]
    group = h // kv
    group_pad = next_pow2(group)
    out = torch.empty_like(q)
    grid = (prefill_items.shape[0], kv)
    _prefill_kernel[grid](
        q, k_cache, v_cache, out, query_start_loc, seq_lens, block_tables, prefill_items, scale * _LOG2E,
        q.stride(0), q.stride(1), out.stride(0), out.stride(1),
        *_cache_strides(k_cache, v_cache), block_tables.stride(0),
        GROUP=group, GROUP_PAD=group_pad, HEAD_DIM=dim, BLOCK_SIZE=k_cache.shape[1],
        BLOCK_Q=PREFILL_QUERY_BLOCK, BLOCK_N=block_n, PRECISION=_precision(q.dtype),
        num_warps=4 if group_pad <= 4 else 8, num_stages=2,
    )
    return out


def paged_decode(
    q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, seq_lens: torch.Tensor,
    block_tables: torch.Tensor, scale: float, *, num_splits: int | None = None, block_n: int = 64,
) -> torch.Tensor:
    """q [S, H, D], one query per sequence (row i = sequence i) -> out [S, H, D].

    Rows with seq_len 0 (CUDA-graph padding) produce zeros.
    """
    s, h, dim = q.shape
    kv = k_cache.shape[2]
    group = h // kv
    if num_splits is None:
        num_splits = decode_num_splits(s, kv, block_tables.shape[1] * k_cache.shape[1], block_n, q.device)
    out = torch.empty_like(q)
    if num_splits > 1:
        part_acc = torch.empty((s, h, num_splits, dim), dtype=torch.float32, device=q.device)
        part_ml = torch.empty((s, h, num_splits, 2), dtype=torch.float32, device=q.device)
    else:
        part_acc = part_ml = out  # unused
    _decode_kernel[(s, kv, num_splits)](
        q, k_cache, v_cache, out, part_acc, part_ml, seq_lens, block_tables, scale * _LOG2E,
        q.stride(0), q.stride(1), out.stride(0), out.stride(1),
        *_cache_strides(k_cache, v_cache), block_tables.stride(0),
        NUM_HEADS=h, GROUP=group, GROUP_PAD=max(16, next_pow2(group)), HEAD_DIM=dim,
        BLOCK_SIZE=k_cache.shape[1], BLOCK_N=block_n, NUM_SPLITS=num_splits,
        PRECISION=_precision(q.dtype), num_warps=4, num_stages=2,
    )
    if num_splits > 1:
        _decode_reduce_kernel[(s, h)](
            part_acc, part_ml, out, out.stride(0), out.stride(1),
            NUM_HEADS=h, HEAD_DIM=dim, NUM_SPLITS=num_splits, num_warps=4,
        )
    return out
