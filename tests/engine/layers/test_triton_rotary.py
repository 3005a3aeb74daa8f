"""The fused RoPE + QK-norm + KV-store kernel against the torch reference,
run by Triton's interpreter on CPU.

Tiny shapes keep the interpreter fast. fp32 and fp16 only: Triton 3.6's interpreter gets
tl.dot wrong for bf16 operands (garbage, not rounding), so bf16 at real shapes is checked on
the GPU by part (b) of tools/gpu_check_model.py.
"""
from __future__ import annotations

import pytest
import torch

from hymt.engine.layers import RotaryEmbedding, apply_rotary, rms_norm, store_kv, triton_available

pytestmark = [
    pytest.mark.skipif(not triton_available(), reason="triton not installed (pip install triton==3.6.0)"),
    pytest.mark.usefixtures("triton_interpreter"),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_fused_rope_qk_norm_and_store(dtype):
    from hymt.engine.layers.triton_rotary import rope_norm_store_triton

    torch.manual_seed(1)
    t, heads, kv, dim = 7, 4, 2, 16
    qkv = torch.randn(t, (heads + 2 * kv) * dim).to(dtype)
    positions = torch.tensor([0, 1, 2, 3, 40, 41, 1000])
    slots = torch.tensor([3, 4, -1, 7, 8, 9, 0])
    rot = RotaryEmbedding(dim, 11158839.93)
    qw, kw = (1 + 0.2 * torch.randn(dim)).to(dtype), (1 + 0.2 * torch.randn(dim)).to(dtype)
    ref = qkv.clone()
    q, k = ref[:, : heads * dim].view(t, heads, dim), ref[:, heads * dim : (heads + kv) * dim].view(t, kv, dim)
    v = ref[:, (heads + kv) * dim :].view(t, kv, dim)
    cos, sin = rot.cos_sin(positions)
    q_ref, k_ref = rms_norm(apply_rotary(q, cos, sin), qw, 1e-5), rms_norm(apply_rotary(k, cos, sin), kw, 1e-5)
    kc_ref, vc_ref = torch.zeros(4, 4, kv, dim, dtype=dtype), torch.zeros(4, 4, kv, dim, dtype=dtype)
    store_kv(k_ref, v, kc_ref, vc_ref, slots)
    kc, vc = torch.zeros_like(kc_ref), torch.zeros_like(vc_ref)
    rope_norm_store_triton(qkv, positions, rot.inv_freq, qw, kw, 1e-5, heads, kv, dim, slots, kc, vc)
    tol = 1e-5 if dtype == torch.float32 else 2e-3
    assert (qkv[:, : heads * dim].view(t, heads, dim) - q_ref).abs().max().item() < tol
    assert (kc.float() - kc_ref.float()).abs().max().item() < tol
    assert torch.equal(vc, vc_ref) and torch.equal(qkv[:, (heads + kv) * dim :], ref[:, (heads + kv) * dim :])


def test_rope_without_norm_and_without_store():
    from hymt.engine.layers.triton_rotary import rope_norm_store_triton

    qkv = torch.randn(3, 8 * 16)
    ref = qkv.clone().view(3, 8, 16)
    rot = RotaryEmbedding(16, 10000.0)
    cos, sin = rot.cos_sin(torch.tensor([2, 9, 33]))
    rope_norm_store_triton(qkv, torch.tensor([2, 9, 33]), rot.inv_freq, None, None, 1e-5, 4, 2, 16)
    assert (qkv.view(3, 8, 16)[:, :6] - apply_rotary(ref[:, :6], cos, sin)).abs().max().item() < 1e-5
