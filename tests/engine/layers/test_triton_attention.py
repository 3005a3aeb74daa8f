"""Paged prefill and split-K decode kernels against the torch reference,
run by Triton's interpreter on CPU.

Tiny shapes keep the interpreter fast. fp32 and fp16 only: Triton 3.6's interpreter gets
tl.dot wrong for bf16 operands (garbage, not rounding), so bf16 at real shapes is checked on
the GPU by part (b) of tools/gpu_check_model.py.
"""
from __future__ import annotations

import random

import pytest
import torch

from hymt.engine.batch import ScheduledSeq, StepBatch
from hymt.engine.layers import paged_attention_torch, triton_available
from hymt.engine.step_inputs import build_step_inputs

pytestmark = [
    pytest.mark.skipif(not triton_available(), reason="triton not installed (pip install triton==3.6.0)"),
    pytest.mark.usefixtures("triton_interpreter"),
]

H, KV, D, BS, NB = 8, 2, 16, 4, 64


def random_batch(lens, dtype=torch.float32, seed=0, max_blocks=None):
    torch.manual_seed(seed)
    pool = list(range(NB))
    random.Random(seed).shuffle(pool)
    seqs = [ScheduledSeq(i, [0] * n, s, [pool.pop() for _ in range(-(-(s + n) // BS))], True)
            for i, (s, n) in enumerate(lens)]
    meta = build_step_inputs(StepBatch(seqs), BS, "cpu", num_cols=max_blocks).metadata
    k_cache, v_cache = torch.randn(NB, BS, KV, D).to(dtype), torch.randn(NB, BS, KV, D).to(dtype)
    q = torch.randn(meta.positions.shape[0], H, D).to(dtype)
    return q, k_cache, v_cache, meta


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_prefill_kernel_with_prefixes_and_decode_rows(dtype):
    from hymt.engine.layers.triton_attention import paged_prefill

    q, kc, vc, meta = random_batch([(0, 9), (5, 3), (12, 1), (0, 1), (3, 20)], dtype)
    ref = paged_attention_torch(q.float(), kc.float(), vc.float(), meta, D**-0.5)
    out = paged_prefill(q, kc, vc, meta.query_start_loc, meta.seq_lens, meta.block_tables, meta.prefill_items,
                        D**-0.5, block_n=16)
    assert out.dtype == dtype
    assert (out.float() - ref).abs().max().item() < (1e-5 if dtype == torch.float32 else 2e-3)


def test_prefill_work_list_padded_with_inert_items_gives_the_same_output():
    """A CUDA graph launches the kernel over a work list padded to a fixed length: the padding
    items compute nothing and touch no output row."""
    from hymt.engine.attention_metadata import INERT_QUERY_BLOCK
    from hymt.engine.layers.triton_attention import paged_prefill

    q, kc, vc, meta = random_batch([(0, 40), (7, 2), (3, 17)])
    items = meta.prefill_items
    assert items.tolist() == [[0, 0], [0, 1], [0, 2], [1, 0], [2, 0], [2, 1]]  # 16 queries an item
    padded = torch.cat([items, torch.tensor([[0, INERT_QUERY_BLOCK]] * 5, dtype=items.dtype)])
    exact = paged_prefill(q, kc, vc, meta.query_start_loc, meta.seq_lens, meta.block_tables, items, D**-0.5,
                          block_n=16)
    ref = paged_attention_torch(q, kc, vc, meta, D**-0.5)
    out = paged_prefill(q, kc, vc, meta.query_start_loc, meta.seq_lens, meta.block_tables, padded, D**-0.5,
                        block_n=16)
    assert (exact - ref).abs().max().item() < 1e-5
    assert torch.equal(out, exact)


@pytest.mark.parametrize("splits", [1, 2, 4])
def test_decode_kernel_split_k(splits):
    from hymt.engine.layers.triton_attention import paged_decode

    q, kc, vc, meta = random_batch([(0, 1), (4, 1), (36, 1), (50, 1)], max_blocks=14)
    ref = paged_attention_torch(q, kc, vc, meta, D**-0.5)
    out = paged_decode(q, kc, vc, meta.seq_lens, meta.block_tables, D**-0.5, num_splits=splits, block_n=16)
    assert (out - ref).abs().max().item() < 1e-5


@pytest.mark.parametrize("splits", [1, 4])
def test_decode_padding_rows_give_zeros(splits):
    from hymt.engine.layers.triton_attention import paged_decode

    q, kc, vc, meta = random_batch([(7, 1), (20, 1)])
    seq_lens = torch.cat([meta.seq_lens, torch.zeros(2, dtype=torch.int32)])
    tables = torch.cat([meta.block_tables, torch.zeros(2, meta.block_tables.shape[1], dtype=torch.int32)])
    q = torch.cat([q, torch.randn(2, H, D)])
    out = paged_decode(q, kc, vc, seq_lens, tables, D**-0.5, num_splits=splits, block_n=16)
    assert torch.isfinite(out).all() and torch.count_nonzero(out[2:]) == 0
    assert (out[:2] - paged_attention_torch(q[:2], kc, vc, meta, D**-0.5)).abs().max().item() < 1e-5


def test_decode_splits_depend_only_on_static_shapes():
    from hymt.engine.layers.triton_attention import decode_num_splits

    cpu = torch.device("cpu")
    assert decode_num_splits(1, 4, 64, 64, cpu) == 1  # one tile: nothing to split
    small = decode_num_splits(1, 1, 4096, 64, cpu)
    assert small == 2 and small & (small - 1) == 0  # power of two (the reduce kernel's arange)
    assert decode_num_splits(256, 4, 4096, 64, cpu) == 1
