"""Building blocks of the native model: norms, rotary, linear, activation, paged attention.

Triton kernels live in the `triton_*` modules and are imported only when a CUDA tensor meets
an installed Triton (layers/kernel_choice.py), so this package imports on machines without Triton.
"""
from hymt.engine.layers.activation import silu_and_mul
from hymt.engine.layers.attention import Attention, paged_attention_torch, triton_attention_supported
from hymt.engine.layers.kernel_choice import triton_available, use_triton
from hymt.engine.layers.kv_store import store_kv
from hymt.engine.layers.linear import Linear
from hymt.engine.layers.rmsnorm import RMSNorm, rms_norm
from hymt.engine.layers.rotary import RotaryEmbedding, apply_rotary, inv_frequencies, rope_base

__all__ = [
    "Attention", "Linear", "RMSNorm", "RotaryEmbedding", "apply_rotary", "inv_frequencies", "paged_attention_torch",
    "rms_norm", "rope_base", "silu_and_mul", "store_kv", "triton_attention_supported", "triton_available", "use_triton",
]
