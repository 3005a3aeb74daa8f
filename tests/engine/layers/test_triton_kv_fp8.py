"""The Triton store and attention kernels with an fp8 (e4m3, unscaled) KV cache, run by
Triton's interpreter on CPU, against the torch path on the same fp8 cache.

Triton 3.6's interpreter emulates float <-> e4m3 casts wrongly: float -> e4m3 drops the
mantissa carry into the exponent (1.98 -> 1.0, not 2.0), truncates subnormals and wraps
overflow (500 -> 256), and e4m3 -> float reads the NaN code 0x7f as 480. On the GPU these
casts are single hardware instructions (cvt.rn.satfinite.e4m3x2.f32 and cvt.rn.f16x2.e4m3x2,
seen in the sm_90 PTX). So these tests route the interpreter's fp8 casts through torch's
(round to nearest even, saturating at +-448): what is checked is the kernels' logic, which
values are cast where and read back how, not the interpreter's emulation. The compiled
kernels with fp8 caches are covered by test_triton_compile.py (sm_90 PTX) and, numerically,
by tools/gpu_check_model.py on a GPU.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

from hymt.engine.batch import ScheduledSeq, StepBatch
from hymt.engine.layers import paged_attention_torch, triton_available
from hymt.engine.layers.kv_store import to_cache_dtype
from hymt.engine.step_inputs import build_step_inputs

pytestmark = [
    pytest.mark.skipif(not triton_available(), reason="triton not installed (pip install triton==3.6.0)"),
    pytest.mark.usefixtures("triton_interpreter", "torch_fp8_casts"),
]

FP8 = torch.float8_e4m3fn
_TORCH = {"fp8e4nv": FP8, "fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
_INT = {1: (np.int8, torch.int8), 2: (np.int16, torch.int16), 4: (np.int32, torch.int32)}
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32}


@pytest.fixture(scope="module")
def torch_fp8_casts():
    """The interpreter's fp8 casts done by torch (see the module docstring)."""
    import triton.runtime.interpreter as interp

    original = interp._convert_float

    def convert(data, src_ty, dst_ty, rounding_mode):
        if "fp8e4nv" not in (src_ty.name, dst_ty.name):
            return original(data, src_ty, dst_ty, rounding_mode)
        src_np, src_int = _INT[src_ty.primitive_bitwidth // 8]
        src = torch.from_numpy(np.frombuffer(data.tobytes(), dtype=src_np).copy()).view(_TORCH[src_ty.name])
        if dst_ty.name == "fp8e4nv":
            src = src.float().clamp(-448.0, 448.0)  # e4m3's largest finite value: satfinite, as the GPU's cvt
        out = src.to(_TORCH[dst_ty.name])
        width = dst_ty.primitive_bitwidth // 8
        return out.view(_INT[width][1]).numpy().view(_UINT[width]).reshape(data.shape)

    interp._convert_float = convert
    try:
        yield
    finally:
        interp._convert_float = original


def fp8_step(x: torch.Tensor) -> torch.Tensor:
    """One e4m3 rounding step at |x| (3 mantissa bits; 2^-9 in the subnormal range)."""
    exponent = torch.floor(torch.log2(x.abs().clamp_min(2.0**-6)))
    return torch.exp2(exponent - 3)


def test_fused_store_writes_the_fp8_cache_the_torch_path_writes(rope_store_case):
    slots = [3, 4, -1, 7, 8, 9, 0, 12, 15]
    case = rope_store_case([0, 1, 2, 3, 40, 41, 1000, 7, 8], slots, seed=3, cache_dtype=FP8)
    kc, vc, kc_ref, vc_ref = case.kc, case.vc, case.kc_ref, case.vc_ref
    assert (case.q - case.q_ref).abs().max().item() < 1e-5
    # V is cast from the same fp32 values: the same bytes; slot -1 (token 2) is written nowhere.
    assert torch.equal(vc.view(torch.uint8), vc_ref.view(torch.uint8))
    written = vc.view(torch.uint8).view(16, -1).ne(0).any(dim=1)
    assert sorted(torch.nonzero(written).flatten().tolist()) == sorted(s for s in slots if s >= 0)
    # K is computed in fp32 by both (differences ~1e-7) before rounding to fp8: the bytes agree
    # except where the two values straddle a rounding boundary, and then by one step only.
    a, b = kc.float(), kc_ref.float()
    assert torch.all((a - b).abs() <= fp8_step(b) * 1.0001)
    assert torch.mean((kc.view(torch.uint8) == kc_ref.view(torch.uint8)).float()).item() >= 0.99


H, KV, D, BS, NB = 8, 2, 16, 4, 64


def fp8_batch(lens, q_dtype=torch.float32, seed=0, max_blocks=None):
    """q, an fp32 cache, the same cache in fp8 (K/V cast as store_kv casts them), metadata."""
    torch.manual_seed(seed)
    pool = torch.randperm(NB, generator=torch.Generator().manual_seed(seed)).tolist()
    seqs = [ScheduledSeq(i, [0] * n, s, [pool.pop() for _ in range(-(-(s + n) // BS))], True)
            for i, (s, n) in enumerate(lens)]
    meta = build_step_inputs(StepBatch(seqs), BS, "cpu", num_cols=max_blocks).metadata
    kc, vc = torch.randn(NB, BS, KV, D), torch.randn(NB, BS, KV, D)
    # In the first sequence's first block: saturation, underflow to 0, a subnormal.
    kc[meta.block_tables[0, 0], 0, 0, :4] = torch.tensor([1000.0, -1000.0, 1e-4, 3e-3])
    q = torch.randn(meta.positions.shape[0], H, D).to(q_dtype)
    return q, (kc, vc), to_cache_dtype(kc, FP8), to_cache_dtype(vc, FP8), meta


@pytest.mark.parametrize("q_dtype", [torch.float32, torch.float16])
def test_prefill_kernel_reads_an_fp8_cache(q_dtype):
    from hymt.engine.layers.triton_attention import paged_prefill

    q, _, kc, vc, meta = fp8_batch([(0, 9), (5, 3), (12, 1), (0, 1), (3, 20)], q_dtype)
    assert kc.dtype == FP8
    assert kc.float()[meta.block_tables[0, 0], 0, 0, :4].tolist() == [448.0, -448.0, 0.0, 2 * 2.0**-9]
    ref = paged_attention_torch(q.float(), kc, vc, meta, D**-0.5)  # the torch path on the same cache
    out = paged_prefill(q, kc, vc, meta.query_start_loc, meta.seq_lens, meta.block_tables, meta.prefill_items,
                        D**-0.5, block_n=16)
    assert out.dtype == q_dtype
    assert (out.float() - ref).abs().max().item() < (1e-5 if q_dtype == torch.float32 else 2e-3)


@pytest.mark.parametrize("splits", [1, 4])
def test_decode_kernel_reads_an_fp8_cache(splits):
    from hymt.engine.layers.triton_attention import paged_decode

    q, (kc32, vc32), kc, vc, meta = fp8_batch([(0, 1), (4, 1), (36, 1), (50, 1)], max_blocks=14)
    ref = paged_attention_torch(q, kc, vc, meta, D**-0.5)
    out = paged_decode(q, kc, vc, meta.seq_lens, meta.block_tables, D**-0.5, num_splits=splits, block_n=16)
    assert (out - ref).abs().max().item() < 1e-5
    # The kernel attended the rounded cache, not something closer to the fp32 values.
    assert (paged_attention_torch(q, kc32, vc32, meta, D**-0.5) - out).abs().max().item() > 1e-3
