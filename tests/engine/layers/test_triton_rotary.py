"""The fused RoPE + QK-norm + KV-store kernel against the torch reference,
run by Triton's interpreter on CPU.

Tiny shapes keep the interpreter fast. fp32 and fp16 only: Triton 3.6's interpreter gets
tl.dot wrong for bf16 operands (garbage, not rounding), so bf16 at real shapes is checked on
the GPU by part (b) of tools/gpu_check_model.py.
"""
from __future__ import annotations

import pytest
import torch

from hymt.engine.layers import RotaryEmbedding, apply_rotary, triton_available

pytestmark = [
    pytest.mark.skipif(not triton_available(), reason="triton not installed (pip install triton==3.6.0)"),
    pytest.mark.usefixtures("triton_interpreter"),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_fused_rope_qk_norm_and_store(dtype, rope_store_case):
    case = rope_store_case([0, 1, 2, 3, 40, 41, 1000], [3, 4, -1, 7, 8, 9, 0], seed=1, dtype=dtype)
    tol = 1e-5 if dtype == torch.float32 else 2e-3
    v_cols = case.v_columns
    assert (case.q - case.q_ref).abs().max().item() < tol
    assert (case.kc.float() - case.kc_ref.float()).abs().max().item() < tol
    assert torch.equal(case.vc, case.vc_ref) and torch.equal(case.qkv[:, v_cols], case.ref[:, v_cols])


def test_rope_without_norm_and_without_store():
    from hymt.engine.layers.triton_rotary import rope_norm_store_triton

    qkv = torch.randn(3, 8 * 16)
    ref = qkv.clone().view(3, 8, 16)
    rot = RotaryEmbedding(16, 10000.0)
    cos, sin = rot.cos_sin(torch.tensor([2, 9, 33]))
    rope_norm_store_triton(qkv, torch.tensor([2, 9, 33]), rot.inv_freq, None, None, 1e-5, 4, 2, 16)
    assert (qkv.view(3, 8, 16)[:, :6] - apply_rotary(ref[:, :6], cos, sin)).abs().max().item() < 1e-5
