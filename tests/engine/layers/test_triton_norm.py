"""The RMSNorm (+ residual add) kernel against the torch reference,
run by Triton's interpreter on CPU.

Tiny shapes keep the interpreter fast. fp32 and fp16 only: Triton 3.6's interpreter gets
tl.dot wrong for bf16 operands (garbage, not rounding), so bf16 at real shapes is checked on
the GPU by part (b) of tools/gpu_check_model.py.
"""
from __future__ import annotations

import pytest
import torch

from hymt.engine.layers import rms_norm, triton_available

pytestmark = [
    pytest.mark.skipif(not triton_available(), reason="triton not installed (pip install triton==3.6.0)"),
    pytest.mark.usefixtures("triton_interpreter"),
]


@pytest.mark.parametrize("residual", [False, True])
def test_rmsnorm_kernel(residual):
    from hymt.engine.layers.triton_norm import rmsnorm_triton

    torch.manual_seed(2)
    x, r, w = torch.randn(5, 48).half(), torch.randn(5, 48).half(), (1 + torch.randn(48)).half()
    out, new_res = rmsnorm_triton(x, w, 1e-5, r if residual else None)
    h = x + r if residual else x
    assert torch.equal(out, rms_norm(h, w, 1e-5))
    assert (new_res is None) != residual and (not residual or torch.equal(new_res, h))
