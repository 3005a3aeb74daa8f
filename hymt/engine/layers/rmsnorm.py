"""RMSNorm exactly as transformers computes it, with an optional fused residual add."""
from __future__ import annotations

import torch
from torch import nn

from hymt.engine.layers.kernel_choice import use_triton


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """weight * (x * rsqrt(mean(x^2) + eps)).to(x.dtype), the statistics in float32.

    The cast back happens before the weight multiply, as in HF's HunYuanDenseV1RMSNorm; the
    multiply runs in the weight's dtype (the model dtype).
    """
    xf = x.to(torch.float32)
    var = xf.pow(2).mean(-1, keepdim=True)
    return weight * (xf * torch.rsqrt(var + eps)).to(x.dtype)


class RMSNorm(nn.Module):
    """Pre-norm RMSNorm over the last dim; `forward(x, residual)` also adds the residual.

    With a residual it returns (norm(x + residual), x + residual): the sum is the next
    residual, rounded to the model dtype before it is normalised, as transformers does.
    """

    def __init__(self, size: int, eps: float, *, device=None, dtype=None):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.empty(size, device=device, dtype=dtype), requires_grad=False)

    def forward(
        self, x: torch.Tensor, residual: torch.Tensor | None = None
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        if use_triton(x) and x.dim() == 2:
            from hymt.engine.layers.triton_norm import rmsnorm_triton

            out, res = rmsnorm_triton(x, self.weight, self.eps, residual)
            return out if residual is None else (out, res)
        if residual is None:
            return rms_norm(x, self.weight, self.eps)
        h = x + residual
        return rms_norm(h, self.weight, self.eps), h

    def extra_repr(self) -> str:
        return f"{tuple(self.weight.shape)}, eps={self.eps}"
