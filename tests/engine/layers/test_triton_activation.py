"""The SwiGLU kernel against the torch reference,
run by Triton's interpreter on CPU.

Tiny shapes keep the interpreter fast. fp32 and fp16 only: Triton 3.6's interpreter gets
tl.dot wrong for bf16 operands (garbage, not rounding), so bf16 at real shapes is checked on
the GPU by part (b) of tools/gpu_check_model.py.
"""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from hymt.engine.layers import triton_available

pytestmark = [
    pytest.mark.skipif(not triton_available(), reason="triton not installed (pip install triton==3.6.0)"),
    pytest.mark.usefixtures("triton_interpreter"),
]


def test_silu_and_mul_kernel():
    from hymt.engine.layers.triton_activation import silu_and_mul_triton

    gu = torch.randn(4, 2 * 40).half()
    gate, up = gu.chunk(2, dim=-1)
    assert torch.equal(silu_and_mul_triton(gu), F.silu(gate) * up)
