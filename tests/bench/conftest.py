"""Fixtures of the bench tests: a tiny hunyuan_v1_dense config.json for random-weight runs."""
from __future__ import annotations

import json

import pytest
import torch

torch.set_num_threads(2)

TINY_CONFIG = dict(
    architectures=["HunYuanDenseV1ForCausalLM"], model_type="hunyuan_v1_dense", vocab_size=301,
    hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
    num_key_value_heads=2, head_dim=16, rope_theta=10000.0, rms_norm_eps=1e-5, hidden_act="silu",
    use_qk_norm=True, tie_word_embeddings=True, bos_token_id=1, eos_token_id=2, pad_token_id=0,
)


@pytest.fixture(scope="session")
def tiny_config_dir(tmp_path_factory):
    """A directory holding only config.json: enough for --random-weights --model DIR."""
    path = tmp_path_factory.mktemp("tiny-config")
    (path / "config.json").write_text(json.dumps(TINY_CONFIG))
    return path
