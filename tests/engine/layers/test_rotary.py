"""RoPE: dynamic-alpha base, inv_freq and rotation identical to transformers."""
from __future__ import annotations

import math

import pytest
import torch
from transformers import HunYuanDenseV1Config
from transformers.models.hunyuan_v1_dense.modeling_hunyuan_v1_dense import (
    HunYuanDenseV1RotaryEmbedding,
    apply_rotary_pos_emb,
)

from hymt.engine.layers import RotaryEmbedding, apply_rotary, rope_base
from hymt.errors import ModelLoadError


def test_dynamic_alpha_base_of_the_released_configs():
    legacy = {"rope_theta": 10000.0, "rope_scaling": {"type": "dynamic", "alpha": 1000.0, "factor": 1.0}}
    # docs/reference/models.md §3.1: 10000 * 1000 ** (128 / 126) = 11158839.93
    assert rope_base(legacy, 128) == pytest.approx(11158839.93, rel=1e-9)
    assert rope_base(legacy, 128) == 10000.0 * 1000.0 ** (128 / 126)
    assert rope_base(legacy, 16) == pytest.approx(10000.0 * 1000.0 ** (16 / 14))


def test_transformers5_rope_parameters_form():
    tf5 = {"rope_parameters": {"rope_type": "dynamic", "alpha": 1000.0, "rope_theta": 10000.0, "factor": 1.0}}
    assert rope_base(tf5, 128) == pytest.approx(11158839.93, rel=1e-9)


@pytest.mark.parametrize("config", [
    {}, {"rope_theta": 5e5}, {"rope_theta": 5e5, "rope_scaling": {"type": "dynamic", "factor": 2.0}},
])
def test_plain_base_without_alpha(config):
    assert rope_base(config, 128) == config.get("rope_theta", 10000.0)


def test_unsupported_rope_type_is_refused():
    with pytest.raises(ModelLoadError, match="'linear'.*valid"):
        rope_base({"rope_scaling": {"type": "linear", "factor": 2.0}}, 128)


def hf_rotary(head_dim=16):
    cfg = HunYuanDenseV1Config(
        hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=head_dim, max_position_embeddings=4096,
        rope_theta=10000.0, rope_scaling={"type": "dynamic", "alpha": 1000.0, "factor": 1.0},
    )
    return HunYuanDenseV1RotaryEmbedding(cfg), rope_base(cfg.to_dict(), head_dim)


def test_inv_freq_and_rotation_match_transformers():
    ref, base = hf_rotary()
    ours = RotaryEmbedding(16, base)
    assert torch.equal(ours.inv_freq, ref.inv_freq)
    positions = torch.tensor([0, 1, 7, 300, 4095])
    x = torch.randn(len(positions), 4, 16)
    cos_ref, sin_ref = ref(x, positions[None])
    q_ref, _ = apply_rotary_pos_emb(x.transpose(0, 1)[None], x.transpose(0, 1)[None], cos_ref, sin_ref)
    cos, sin = ours.cos_sin(positions)
    assert torch.equal(apply_rotary(x, cos, sin), q_ref[0].transpose(0, 1))


def test_rotation_is_a_rotation():
    ours = RotaryEmbedding(16, 11158839.93)
    x = torch.randn(3, 2, 16, dtype=torch.float64).float()
    cos, sin = ours.cos_sin(torch.tensor([0, 5, 1000]))
    y = apply_rotary(x, cos, sin)
    assert torch.equal(y[0], x[0])  # position 0: identity
    assert torch.allclose(y.norm(dim=-1), x.norm(dim=-1), rtol=1e-5)
    # Pairs (i, i + D/2) rotate by angle pos * inv_freq[i] (NeoX rotate-half, not interleaved).
    angle = 5 * ours.inv_freq[1].item()
    a, b = x[1, 0, 1].item(), x[1, 0, 9].item()
    assert y[1, 0, 1].item() == pytest.approx(a * math.cos(angle) - b * math.sin(angle), abs=1e-5)
