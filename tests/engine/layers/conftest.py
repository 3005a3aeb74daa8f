"""A shared case of the fused RoPE + QK-norm + KV-store kernel: random q/k/v, the torch
reference (rotary, rms_norm, store_kv) and the Triton kernel run on a copy."""
from __future__ import annotations

from dataclasses import dataclass

import pytest
import torch

from hymt.engine.layers import RotaryEmbedding, apply_rotary, rms_norm, store_kv

HEADS, KV_HEADS, HEAD_DIM = 4, 2, 16


@dataclass
class RopeStoreCase:
    """Inputs, the torch reference and what the kernel wrote. Shapes with t tokens:
    qkv / ref: [t, (HEADS + 2 KV_HEADS) * HEAD_DIM] (after / before the kernel ran in place);
    q_ref: [t, HEADS, HEAD_DIM]; caches: [4 blocks, 4 slots, KV_HEADS, HEAD_DIM]."""

    qkv: torch.Tensor
    ref: torch.Tensor
    q_ref: torch.Tensor
    kc: torch.Tensor
    vc: torch.Tensor
    kc_ref: torch.Tensor
    vc_ref: torch.Tensor

    @property
    def q(self) -> torch.Tensor:
        return self.qkv[:, : HEADS * HEAD_DIM].view(len(self.qkv), HEADS, HEAD_DIM)

    @property
    def v_columns(self) -> slice:
        return slice((HEADS + KV_HEADS) * HEAD_DIM, None)


@pytest.fixture
def rope_store_case():
    """build(positions, slots, seed, dtype=fp32, cache_dtype=dtype) -> RopeStoreCase."""
    from hymt.engine.layers.triton_rotary import rope_norm_store_triton

    def build(positions: list[int], slots: list[int], seed: int, dtype=torch.float32, cache_dtype=None):
        torch.manual_seed(seed)
        t, heads, kv, dim = len(positions), HEADS, KV_HEADS, HEAD_DIM
        qkv = torch.randn(t, (heads + 2 * kv) * dim).to(dtype)
        qw, kw = (1 + 0.2 * torch.randn(dim)).to(dtype), (1 + 0.2 * torch.randn(dim)).to(dtype)
        positions_t, slots_t = torch.tensor(positions), torch.tensor(slots)
        rot = RotaryEmbedding(dim, 11158839.93)
        ref = qkv.clone()
        q, k = ref[:, : heads * dim].view(t, heads, dim), ref[:, heads * dim : (heads + kv) * dim].view(t, kv, dim)
        v = ref[:, (heads + kv) * dim :].view(t, kv, dim)
        cos, sin = rot.cos_sin(positions_t)
        q_ref, k_ref = rms_norm(apply_rotary(q, cos, sin), qw, 1e-5), rms_norm(apply_rotary(k, cos, sin), kw, 1e-5)
        cache = cache_dtype or dtype
        kc_ref, vc_ref = torch.zeros(4, 4, kv, dim, dtype=cache), torch.zeros(4, 4, kv, dim, dtype=cache)
        store_kv(k_ref, v, kc_ref, vc_ref, slots_t)
        kc, vc = torch.zeros_like(kc_ref), torch.zeros_like(vc_ref)
        rope_norm_store_triton(qkv, positions_t, rot.inv_freq, qw, kw, 1e-5, heads, kv, dim, slots_t, kc, vc)
        return RopeStoreCase(qkv, ref, q_ref, kc, vc, kc_ref, vc_ref)

    return build
