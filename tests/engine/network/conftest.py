"""Tiny Hunyuan dense checkpoints written by transformers itself, one per config family."""
from __future__ import annotations

import os

import pytest
import torch

# Triton's interpreter must be chosen before triton is first imported; without a GPU the
# compiled mode cannot run anyway, so the Triton-path tests get the interpreter.
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

TINY = dict(
    architectures=["HunYuanDenseV1ForCausalLM"], model_type="hunyuan_v1_dense", vocab_size=301,
    hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
    num_key_value_heads=2, head_dim=16, rope_theta=10000.0, max_position_embeddings=262144,
    rms_norm_eps=1e-5, hidden_act="silu", use_qk_norm=True, use_cla=False, attention_bias=False,
    mlp_bias=False, tie_word_embeddings=True, bos_token_id=1, eos_token_id=2, pad_token_id=0,
)
# Config variants seen in the families' config.json (docs/reference/models.md §2.1), at tiny sizes.
FAMILIES = {
    # HY-MT1.5-1.8B / Hy-MT2-1.8B: short rope_scaling, odd vocab, tied.
    "hy-mt-1.8b": dict(rope_scaling={"type": "dynamic", "alpha": 1000.0, "factor": 1.0}),
    # Hunyuan-MT-7B / Chimera / HY-MT1.5-7B / Hy-MT2-7B: long rope_scaling, GQA 4:1, odd vocab.
    "hunyuan-7b": dict(
        vocab_size=263, num_key_value_heads=1,
        rope_scaling={"alpha": 1000.0, "beta_fast": 32, "beta_slow": 1, "factor": 1.0, "mscale": 1.0,
                      "mscale_all_dim": 1.0, "type": "dynamic"},
    ),
    # Variants the loader must also handle: untied head, attention biases, plain RoPE, MHA.
    "untied-bias": dict(tie_word_embeddings=False, attention_bias=True, num_key_value_heads=4),
}


def make_hf_model(overrides: dict, seed: int = 0):
    from transformers import HunYuanDenseV1Config, HunYuanDenseV1ForCausalLM

    torch.manual_seed(seed)
    model = HunYuanDenseV1ForCausalLM(HunYuanDenseV1Config(**{**TINY, **overrides})).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.normal_(1.0, 0.2)  # non-trivial norm weights, so their semantics are tested
            elif name.endswith("bias"):
                p.normal_(0.0, 0.1)
            else:
                p.normal_(0.0, 0.1)  # larger than HF's 0.02 so attention patterns are not flat
    return model


@pytest.fixture(scope="session")
def hf_checkpoint(tmp_path_factory):
    """family -> (model dir written by save_pretrained, the transformers model)."""
    cache: dict[str, tuple] = {}

    def get(family: str):
        if family not in cache:
            model = make_hf_model(FAMILIES[family])
            path = tmp_path_factory.mktemp(family)
            model.save_pretrained(path)
            cache[family] = (path, model)
        return cache[family]

    return get
