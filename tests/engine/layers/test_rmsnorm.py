"""RMSNorm semantics: exactly transformers' HunYuanDenseV1RMSNorm (fp32 stats, cast, then weight)."""
from __future__ import annotations

import pytest
import torch
from transformers.models.hunyuan_v1_dense.modeling_hunyuan_v1_dense import HunYuanDenseV1RMSNorm

from hymt.engine.layers import RMSNorm


def pair(dtype, size=64, eps=1e-5):
    ours, ref = RMSNorm(size, eps, dtype=dtype), HunYuanDenseV1RMSNorm(size, eps=eps).to(dtype)
    with torch.no_grad():
        ours.weight.copy_(1 + 0.3 * torch.randn(size))
        ref.weight.copy_(ours.weight)
    return ours, ref


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_matches_transformers_bit_for_bit(dtype):
    torch.manual_seed(0)
    ours, ref = pair(dtype)
    x = (3 * torch.randn(5, 64)).to(dtype)
    with torch.no_grad():
        assert torch.equal(ours(x), ref(x))


def test_cast_happens_before_the_weight_multiply():
    # In bf16, weight * normed.to(bf16) differs from (weight.float() * normed).to(bf16) for
    # some inputs; the HF order is the one the checkpoints were trained with.
    torch.manual_seed(1)
    ours, _ = pair(torch.bfloat16, size=256)
    x = torch.randn(64, 256).to(torch.bfloat16)
    xf = x.float()
    normed = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)
    late_cast = (ours.weight.float() * normed).to(torch.bfloat16)
    early_cast = ours.weight * normed.to(torch.bfloat16)
    with torch.no_grad():
        out = ours(x)
    assert torch.equal(out, early_cast) and not torch.equal(out, late_cast)


def test_residual_variant_returns_the_sum_and_its_norm():
    torch.manual_seed(2)
    ours, ref = pair(torch.bfloat16)
    x, r = torch.randn(3, 64).to(torch.bfloat16), torch.randn(3, 64).to(torch.bfloat16)
    with torch.no_grad():
        out, new_res = ours(x, r)
        assert torch.equal(new_res, r + x) and torch.equal(out, ref(r + x))


def test_normalizes_over_the_last_dim_per_head():
    ours, ref = pair(torch.float32, size=16)
    x = torch.randn(2, 4, 16)  # [T, heads, head_dim], as the QK-norm uses it
    with torch.no_grad():
        assert torch.equal(ours(x), ref(x))
