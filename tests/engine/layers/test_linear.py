"""Linear: the swappable one-weight module the quantizer replaces."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from hymt.engine.layers import Linear


def test_forward_is_x_times_weight_transposed_plus_bias():
    layer = Linear(8, 6, bias=True, output_sizes=(2, 4))
    with torch.no_grad():
        layer.weight.normal_()
        layer.bias.normal_()
    x = torch.randn(3, 8)
    assert torch.allclose(layer(x), x @ layer.weight.T + layer.bias, atol=1e-6)
    assert torch.equal(layer(x), F.linear(x, layer.weight, layer.bias))
    assert not layer.weight.requires_grad


def test_fused_part_sizes_must_add_up():
    assert Linear(4, 6).output_sizes == (6,)
    with pytest.raises(ValueError, match="add up"):
        Linear(4, 6, output_sizes=(2, 2))
