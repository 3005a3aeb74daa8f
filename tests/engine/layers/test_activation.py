"""SwiGLU on the fused gate/up output (torch path)."""
from __future__ import annotations

import torch

from hymt.engine.layers import silu_and_mul


def test_gate_first_then_up():
    gate, up = torch.randn(3, 5), torch.randn(3, 5)
    out = silu_and_mul(torch.cat([gate, up], dim=-1))
    assert torch.allclose(out, gate * torch.sigmoid(gate) * up, atol=1e-6)
