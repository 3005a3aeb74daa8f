"""Tiny in-memory HunYuan dense models for backend tests (float32, CPU, seconds)."""
from __future__ import annotations

import pytest
import torch


def build_tiny_hf_model(seed: int = 0):
    from transformers import HunYuanDenseV1Config, HunYuanDenseV1ForCausalLM

    torch.manual_seed(seed)
    cfg = HunYuanDenseV1Config(
        vocab_size=301, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=16,
        initializer_range=0.5,  # peaked logits, so greedy picks are not near-ties
    )
    model = HunYuanDenseV1ForCausalLM(cfg).eval()
    # Official-style sampling defaults: the engine must not let them leak into requests.
    model.generation_config.do_sample = True
    model.generation_config.temperature = 0.7
    model.generation_config.top_k = 20
    model.generation_config.repetition_penalty = 1.05
    return model


@pytest.fixture(scope="module")
def tiny_hf_model():
    return build_tiny_hf_model()
