"""HunyuanDenseConfig from the released config.json fields (docs/reference/models.md §2.1)."""
from __future__ import annotations

import pytest

from hymt.engine.network import HunyuanDenseConfig
from hymt.errors import ModelLoadError

CONFIG_1_8B = {
    "architectures": ["HunYuanDenseV1ForCausalLM"], "model_type": "hunyuan_v1_dense", "vocab_size": 120818,
    "hidden_size": 2048, "intermediate_size": 6144, "num_hidden_layers": 32, "num_attention_heads": 16,
    "num_key_value_heads": 4, "head_dim": 128, "rope_theta": 10000.0,
    "rope_scaling": {"type": "dynamic", "alpha": 1000.0, "factor": 1.0}, "use_qk_norm": True, "use_cla": False,
    "tie_word_embeddings": True, "rms_norm_eps": 1e-5, "torch_dtype": "bfloat16",
}


def test_released_1_8b_config():
    cfg = HunyuanDenseConfig.from_dict(CONFIG_1_8B)
    assert (cfg.num_layers, cfg.num_heads, cfg.num_kv_heads, cfg.head_dim) == (32, 16, 4, 128)
    assert cfg.padded_vocab_size == 120832  # 944 x 128, docs/reference/engine.md §3.2
    assert (cfg.q_size, cfg.kv_size) == (2048, 512)
    assert cfg.rope_base == pytest.approx(11158839.93, rel=1e-9)
    assert cfg.tie_word_embeddings and cfg.use_qk_norm and not cfg.attention_bias


def test_7b_vocab_pads_to_128256_and_head_dim_falls_back():
    raw = {**CONFIG_1_8B, "vocab_size": 128167, "hidden_size": 4096, "num_attention_heads": 32,
           "num_key_value_heads": 8, "attention_head_dim": 128}
    del raw["head_dim"]
    cfg = HunyuanDenseConfig.from_dict(raw)
    assert cfg.padded_vocab_size == 128256 and cfg.head_dim == 128
    no_dim = {k: v for k, v in raw.items() if k != "attention_head_dim"}
    assert HunyuanDenseConfig.from_dict(no_dim).head_dim == 4096 // 32


def test_missing_fields_are_named():
    raw = {k: v for k, v in CONFIG_1_8B.items() if k not in ("vocab_size", "hidden_size")}
    with pytest.raises(ModelLoadError, match=r"\['vocab_size', 'hidden_size'\]"):
        HunyuanDenseConfig.from_dict(raw)


def test_other_architectures_point_to_the_transformers_engine():
    with pytest.raises(ModelLoadError, match="hy_v3.*engine='transformers'"):
        HunyuanDenseConfig.from_dict({**CONFIG_1_8B, "model_type": "hy_v3"})
    with pytest.raises(ModelLoadError, match="HYV3ForCausalLM"):
        HunyuanDenseConfig.from_dict({**CONFIG_1_8B, "model_type": None, "architectures": ["HYV3ForCausalLM"]})
