"""The forward pass of HunYuanDenseV1ForCausalLM (docs/reference/models.md §3.1) over a paged KV cache.

Per layer: RMSNorm -> fused QKV -> RoPE (NeoX) -> QK-norm after RoPE -> K/V to the cache ->
causal GQA attention -> o_proj -> residual -> RMSNorm -> SwiGLU (fused gate/up) -> residual.
Weights are fused at load (QKV, gate/up) and the LM head is padded to a multiple of 128 rows;
`compute_logits` slices back to the real vocabulary. On CUDA with Triton, RoPE + QK-norm +
KV store run as one kernel, the residual add is fused into the following RMSNorm, and
attention uses the paged Triton kernels. On CPU everything is plain torch.
"""
from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from hymt.engine.attention_metadata import AttentionMetadata
from hymt.engine.layers.activation import silu_and_mul
from hymt.engine.layers.attention import Attention
from hymt.engine.layers.linear import Linear
from hymt.engine.layers.rmsnorm import RMSNorm, rms_norm
from hymt.engine.layers.rotary import RotaryEmbedding, apply_rotary
from hymt.engine.network.hunyuan_config import HunyuanDenseConfig

KVCache = tuple[torch.Tensor, torch.Tensor]
# Builds the decoder's projections: (in_features, out_features, *, bias, output_sizes, device,
# dtype) -> module with Linear's forward contract. hymt.engine.quant supplies quantized ones.
LinearFactory = Callable[..., nn.Module]


class HunyuanAttention(nn.Module):
    def __init__(self, cfg: HunyuanDenseConfig, rotary: RotaryEmbedding, *, device, dtype,
                 linear: LinearFactory = Linear):
        super().__init__()
        self.cfg = cfg
        self.rotary = rotary  # shared by all layers, not owned
        self.qkv_proj = linear(
            cfg.hidden_size, cfg.q_size + 2 * cfg.kv_size, bias=cfg.attention_bias,
            output_sizes=(cfg.q_size, cfg.kv_size, cfg.kv_size), device=device, dtype=dtype,
        )
        self.o_proj = linear(cfg.q_size, cfg.hidden_size, bias=cfg.attention_bias, device=device, dtype=dtype)
        if cfg.use_qk_norm:
            self.query_layernorm = RMSNorm(cfg.head_dim, cfg.rms_norm_eps, device=device, dtype=dtype)
            self.key_layernorm = RMSNorm(cfg.head_dim, cfg.rms_norm_eps, device=device, dtype=dtype)
        self.attn = Attention(cfg.num_heads, cfg.num_kv_heads, cfg.head_dim)

    def forward(self, x: torch.Tensor, meta: AttentionMetadata, kv_cache: KVCache) -> torch.Tensor:
        """x [T, hidden] normed hidden states -> o_proj(attention) [T, hidden]."""
        cfg = self.cfg
        qkv = self.qkv_proj(x)  # [T, (H + 2 KV) * D]
        t = qkv.shape[0]
        fused = self.attn.uses_triton(qkv) and qkv.is_contiguous()
        if fused:
            from hymt.engine.layers.triton_rotary import rope_norm_store_triton

            rope_norm_store_triton(
                qkv, meta.positions, self.rotary.inv_freq,
                self.query_layernorm.weight if cfg.use_qk_norm else None,
                self.key_layernorm.weight if cfg.use_qk_norm else None,
                cfg.rms_norm_eps, cfg.num_heads, cfg.num_kv_heads, cfg.head_dim,
                meta.slot_mapping, kv_cache[0], kv_cache[1],
            )
        q = qkv[:, : cfg.q_size].view(t, cfg.num_heads, cfg.head_dim)
        k = qkv[:, cfg.q_size : cfg.q_size + cfg.kv_size].view(t, cfg.num_kv_heads, cfg.head_dim)
        v = qkv[:, cfg.q_size + cfg.kv_size :].view(t, cfg.num_kv_heads, cfg.head_dim)
        if not fused:
            cos, sin = self.rotary.cos_sin(meta.positions)
            q, k = apply_rotary(q, cos, sin), apply_rotary(k, cos, sin)
            if cfg.use_qk_norm:
                q = rms_norm(q, self.query_layernorm.weight, cfg.rms_norm_eps)
                k = rms_norm(k, self.key_layernorm.weight, cfg.rms_norm_eps)
        out = self.attn(q, k, v, kv_cache, meta, kv_stored=fused)  # [T, H, D]
        return self.o_proj(out.reshape(t, cfg.q_size))


class HunyuanMLP(nn.Module):
    def __init__(self, cfg: HunyuanDenseConfig, *, device, dtype, linear: LinearFactory = Linear):
        super().__init__()
        inter = cfg.intermediate_size
        self.gate_up_proj = linear(
            cfg.hidden_size, 2 * inter, bias=cfg.mlp_bias, output_sizes=(inter, inter), device=device, dtype=dtype
        )
        self.down_proj = linear(inter, cfg.hidden_size, bias=cfg.mlp_bias, device=device, dtype=dtype)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(silu_and_mul(self.gate_up_proj(x)))


class HunyuanDecoderLayer(nn.Module):
    def __init__(self, cfg: HunyuanDenseConfig, rotary: RotaryEmbedding, *, device, dtype,
                 linear: LinearFactory = Linear):
        super().__init__()
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps, device=device, dtype=dtype)
        self.self_attn = HunyuanAttention(cfg, rotary, device=device, dtype=dtype, linear=linear)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps, device=device, dtype=dtype)
        self.mlp = HunyuanMLP(cfg, device=device, dtype=dtype, linear=linear)

    def forward(
        self, h: torch.Tensor, residual: torch.Tensor | None, meta: AttentionMetadata, kv_cache: KVCache
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Returns (mlp output, residual before it); the caller adds them in the next norm."""
        if residual is None:
            residual, x = h, self.input_layernorm(h)
        else:
            x, residual = self.input_layernorm(h, residual)
        x = self.self_attn(x, meta, kv_cache)
        x, residual = self.post_attention_layernorm(x, residual)
        return self.mlp(x), residual


class HunyuanDenseForCausalLM(nn.Module):
    """Native Hunyuan dense model. See module docstring; contract in docs/ARCHITECTURE.md.

    `linear` builds the decoder's projections (quantized ones come from hymt.engine.quant);
    the LM head and the embedding always stay in `dtype`.
    """

    def __init__(self, cfg: HunyuanDenseConfig, *, device, dtype: torch.dtype, linear: LinearFactory = Linear):
        super().__init__()
        self.config = cfg
        device = torch.device(device)
        # The LM head is [padded_vocab, hidden]; tied embeddings are a view of its first rows.
        self.lm_head = Linear(cfg.hidden_size, cfg.padded_vocab_size, device=device, dtype=dtype)
        if cfg.tie_word_embeddings:
            self.embed_weight = self.lm_head.weight[: cfg.vocab_size]
        else:
            self.embed_weight = nn.Parameter(
                torch.empty(cfg.vocab_size, cfg.hidden_size, device=device, dtype=dtype), requires_grad=False
            )
        self.rotary = RotaryEmbedding(cfg.head_dim, cfg.rope_base, device=device)
        self.layers = nn.ModuleList(
            HunyuanDecoderLayer(cfg, self.rotary, device=device, dtype=dtype, linear=linear)
            for _ in range(cfg.num_layers)
        )
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps, device=device, dtype=dtype)

    # Properties the model runner reads.
    vocab_size = property(lambda self: self.config.vocab_size)
    num_layers = property(lambda self: self.config.num_layers)
    num_kv_heads = property(lambda self: self.config.num_kv_heads)
    head_dim = property(lambda self: self.config.head_dim)
    hidden_size = property(lambda self: self.config.hidden_size)
    dtype = property(lambda self: self.norm.weight.dtype)
    device = property(lambda self: self.norm.weight.device)

    def forward(self, input_ids: torch.Tensor, meta: AttentionMetadata, kv_caches: list[KVCache]) -> torch.Tensor:
        """input_ids [T] int64 -> final-normed hidden states [T, hidden]."""
        if len(kv_caches) != self.config.num_layers:
            raise ValueError(f"kv_caches has {len(kv_caches)} layers, the model {self.config.num_layers}")
        h = F.embedding(input_ids, self.embed_weight)  # [T, hidden]
        residual = None
        for layer, kv_cache in zip(self.layers, kv_caches):
            h, residual = layer(h, residual, meta, kv_cache)
        h, _ = self.norm(h, residual)
        return h

    def compute_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """hidden [N, hidden] -> logits [N, vocab] float32 (padded GEMM, sliced)."""
        logits = self.lm_head(hidden)  # [N, padded_vocab]
        return logits[:, : self.config.vocab_size].to(torch.float32).contiguous()


def _arch_of(config_or_model) -> HunyuanDenseConfig:
    if isinstance(config_or_model, HunyuanDenseForCausalLM):
        return config_or_model.config
    if isinstance(config_or_model, HunyuanDenseConfig):
        return config_or_model
    if isinstance(config_or_model, dict):
        return HunyuanDenseConfig.from_dict(config_or_model)
    raise TypeError(f"expected a model, HunyuanDenseConfig or config dict, got {type(config_or_model).__name__}")


def kv_bytes_per_block(config_or_model, block_size: int, dtype: torch.dtype) -> int:
    """Bytes of K and V for one block across all layers."""
    cfg = _arch_of(config_or_model)
    itemsize = torch.empty((), dtype=dtype).element_size()
    return 2 * cfg.num_layers * block_size * cfg.num_kv_heads * cfg.head_dim * itemsize


def allocate_kv_cache(config_or_model, num_blocks: int, block_size: int, dtype: torch.dtype, device) -> list[KVCache]:
    """Per layer (k_cache, v_cache), each [num_blocks, block_size, num_kv_heads, head_dim], zeroed.

    `dtype` comes from dtypes.kv_cache_dtype and may be narrower than the model's (fp8 e4m3:
    the attention layers cast on store and widen on read).
    """
    cfg = _arch_of(config_or_model)
    shape = (num_blocks, block_size, cfg.num_kv_heads, cfg.head_dim)
    return [
        (torch.zeros(shape, dtype=dtype, device=device), torch.zeros(shape, dtype=dtype, device=device))
        for _ in range(cfg.num_layers)
    ]
