"""The fields of a hunyuan_v1_dense config.json the forward pass needs, validated once."""
from __future__ import annotations

from dataclasses import dataclass

from hymt.engine.layers.rotary import rope_base
from hymt.errors import ModelLoadError

SUPPORTED_MODEL_TYPES = ("hunyuan_v1_dense",)
SUPPORTED_ARCHITECTURES = ("HunYuanDenseV1ForCausalLM",)
LM_HEAD_ALIGN = 128  # pad the vocab dim of the LM-head GEMM (docs/reference/engine.md §3.2)


@dataclass(frozen=True)
class HunyuanDenseConfig:
    """Architecture of a Hunyuan dense model (docs/reference/models.md §2.1).

    Attributes:
        vocab_size: real vocabulary size; logits are sliced to it.
        hidden_size, intermediate_size: residual width and SwiGLU width.
        num_layers, num_heads, num_kv_heads, head_dim: decoder shape (GQA when kv < heads).
        rms_norm_eps: epsilon of every RMSNorm (layer norms and QK-norm).
        rope_base: effective RoPE base (dynamic-alpha already applied).
        tie_word_embeddings: LM head shares the embedding matrix.
        use_qk_norm: per-head RMSNorm on q and k after RoPE.
        attention_bias, mlp_bias: biases on q/k/v/o and on gate/up/down.
        max_position_embeddings: the checkpoint's positional limit (never used to size KV).
    """

    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    rms_norm_eps: float = 1e-5
    rope_base: float = 10000.0
    tie_word_embeddings: bool = True
    use_qk_norm: bool = True
    attention_bias: bool = False
    mlp_bias: bool = False
    max_position_embeddings: int = 262144

    @property
    def padded_vocab_size(self) -> int:
        return -(-self.vocab_size // LM_HEAD_ALIGN) * LM_HEAD_ALIGN

    @property
    def q_size(self) -> int:
        return self.num_heads * self.head_dim

    @property
    def kv_size(self) -> int:
        return self.num_kv_heads * self.head_dim

    @classmethod
    def from_dict(cls, config: dict) -> HunyuanDenseConfig:
        """Validate a config.json dict; unsupported variants raise ModelLoadError naming the field."""
        _check_architecture(config)
        missing = [k for k in ("vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers",
                               "num_attention_heads") if k not in config]
        if missing:
            raise ModelLoadError(f"config.json lacks required fields {missing}")
        for key in ("vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads"):
            if not isinstance(config[key], int) or config[key] < 1:
                raise ModelLoadError(f"config.json {key} must be a positive integer, got {config[key]!r}")
        heads = int(config["num_attention_heads"])
        kv_heads = int(config.get("num_key_value_heads") or heads)
        head_dim = int(config.get("head_dim") or config.get("attention_head_dim") or config["hidden_size"] // heads)
        if heads % kv_heads:
            raise ModelLoadError(
                f"config.json num_attention_heads {heads} is not a multiple of num_key_value_heads {kv_heads}"
            )
        if config.get("use_cla"):
            raise ModelLoadError("config.json use_cla=true (cross-layer attention) is not supported; valid: false")
        act = config.get("hidden_act", "silu")
        if act != "silu":
            raise ModelLoadError(f"config.json hidden_act {act!r} is not supported; valid: 'silu'")
        return cls(
            vocab_size=int(config["vocab_size"]),
            hidden_size=int(config["hidden_size"]),
            intermediate_size=int(config["intermediate_size"]),
            num_layers=int(config["num_hidden_layers"]),
            num_heads=heads,
            num_kv_heads=kv_heads,
            head_dim=head_dim,
            rms_norm_eps=float(config.get("rms_norm_eps", 1e-5)),
            rope_base=rope_base(config, head_dim),
            tie_word_embeddings=bool(config.get("tie_word_embeddings", True)),
            use_qk_norm=bool(config.get("use_qk_norm", True)),
            attention_bias=bool(config.get("attention_bias", False)),
            mlp_bias=bool(config.get("mlp_bias", False)),
            max_position_embeddings=int(config.get("max_position_embeddings", 262144)),
        )


def _check_architecture(config: dict) -> None:
    model_type = config.get("model_type")
    archs = config.get("architectures") or []
    if model_type is not None and model_type not in SUPPORTED_MODEL_TYPES:
        raise ModelLoadError(
            f"config.json model_type {model_type!r} is not supported by the native engine; "
            f"valid: {SUPPORTED_MODEL_TYPES} (use engine='transformers' for other models)"
        )
    if archs and not set(archs) & set(SUPPORTED_ARCHITECTURES):
        raise ModelLoadError(
            f"config.json architectures {archs} are not supported by the native engine; "
            f"valid: {SUPPORTED_ARCHITECTURES}"
        )
