"""The RMSNorm-in-the-projection kernel against the unfused torch path, run by Triton's
interpreter on CPU: float32 to rounding, float16 within its precision (the normalised input
is not rounded before the dot product, unlike the unfused path). bf16 at real shapes is
checked on the GPU (tools/gpu_check_model.py --small-batch-fusion).
"""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from hymt.engine.layers import rms_norm, triton_available

pytestmark = [
    pytest.mark.skipif(not triton_available(), reason="triton not installed (pip install triton==3.6.0)"),
    pytest.mark.usefixtures("triton_interpreter"),
]


def unfused(x, residual, norm_weight, weight, swiglu):
    h = x if residual is None else x + residual
    out = F.linear(rms_norm(h, norm_weight, 1e-6), weight)
    if swiglu:
        gate, up = out.chunk(2, dim=-1)
        out = F.silu(gate) * up
    return out, h


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 2e-6), (torch.float16, 3e-3)])
@pytest.mark.parametrize("rows", [1, 3, 4])
@pytest.mark.parametrize("residual", [False, True])
@pytest.mark.parametrize("swiglu", [False, True])
def test_matches_the_unfused_path(dtype, tol, rows, residual, swiglu):
    from hymt.engine.layers.triton_norm_gemv import norm_linear_triton

    torch.manual_seed(rows)
    k, n = 600, 37  # K spans two chunks, the second partial; N is not a multiple of the rows a program takes
    x, res = torch.randn(rows, k).to(dtype), torch.randn(rows, k).to(dtype)
    norm_weight = (1 + 0.1 * torch.randn(k)).to(dtype)
    weight = (torch.randn(2 * n if swiglu else n, k) / k**0.5).to(dtype)
    out, new_res = norm_linear_triton(x, res if residual else None, norm_weight, 1e-6, weight, swiglu=swiglu)
    want, want_res = unfused(x, res if residual else None, norm_weight, weight, swiglu)
    assert out.shape == (rows, n) and out.dtype == dtype
    assert torch.equal(new_res, want_res)
    err = (out.float() - want.float()).abs().max() / want.float().abs().max()
    assert err < tol


def test_takes_one_to_four_rows():
    from hymt.engine.layers.triton_norm_gemv import MAX_ROWS, norm_linear_triton

    with pytest.raises(ValueError, match="1 to 4 rows, got 5"):
        norm_linear_triton(torch.randn(MAX_ROWS + 1, 8), None, torch.ones(8), 1e-6, torch.randn(4, 8))
