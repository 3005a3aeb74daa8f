"""Triton silu(gate) * up in one pass (the torch path needs three kernels)."""
from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _silu_mul_kernel(x_ptr, out_ptr, stride_x, stride_o, inter, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < inter
    g = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    u = tl.load(x_ptr + row * stride_x + inter + cols, mask=mask, other=0.0).to(tl.float32)
    dt = out_ptr.dtype.element_ty
    # Round silu(gate) to the model dtype before the product, as torch's F.silu(g) * u does.
    a = (g / (1.0 + tl.exp(-g))).to(dt).to(tl.float32)
    tl.store(out_ptr + row * stride_o + cols, (a * u).to(dt), mask=mask)


def silu_and_mul_triton(gate_up: torch.Tensor) -> torch.Tensor:
    """gate_up [T, 2 * I] -> [T, I]."""
    assert gate_up.stride(-1) == 1
    t, two_i = gate_up.shape
    inter = two_i // 2
    out = torch.empty((t, inter), dtype=gate_up.dtype, device=gate_up.device)
    block = 1024
    _silu_mul_kernel[(t, triton.cdiv(inter, block))](
        gate_up, out, gate_up.stride(0), out.stride(0), inter, BLOCK=block, num_warps=4
    )
    return out
