"""SwiGLU activation on the fused gate/up GEMM output: silu(gate) * up."""
from __future__ import annotations

import torch
import torch.nn.functional as F

from hymt.engine.layers.kernel_choice import use_triton


def silu_and_mul(gate_up: torch.Tensor) -> torch.Tensor:
    """gate_up [T, 2 * I] (gate first, then up) -> [T, I]."""
    if use_triton(gate_up):
        from hymt.engine.layers.triton_activation import silu_and_mul_triton

        return silu_and_mul_triton(gate_up)
    gate, up = gate_up.chunk(2, dim=-1)
    return F.silu(gate) * up
