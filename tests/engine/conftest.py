"""Shared fixtures of the engine-core tests: tiny models, CPU threads."""
from __future__ import annotations

import os

import pytest
import torch

# Triton's interpreter must be chosen before triton is first imported; without a GPU the
# compiled mode cannot run anyway, so the kernel tests (layers/, quant/) get the interpreter.
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

# The dev machine has 2 cores shared between test runs; tiny models gain nothing from more.
torch.set_num_threads(2)

# A hunyuan_v1_dense config.json at tiny size, for random-weight engines (no tokenizer needed).
TINY_CONFIG = dict(
    architectures=["HunYuanDenseV1ForCausalLM"], model_type="hunyuan_v1_dense", vocab_size=301,
    hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
    num_key_value_heads=2, head_dim=16, rope_theta=10000.0, rms_norm_eps=1e-5, hidden_act="silu",
    use_qk_norm=True, tie_word_embeddings=True, bos_token_id=1, eos_token_id=2, pad_token_id=0,
)


@pytest.fixture(scope="session")
def tiny_config() -> dict:
    return TINY_CONFIG


@pytest.fixture(scope="module")
def triton_interpreter():
    """CPU tensors take the Triton kernels (interpreted) for the tests of one module."""
    from hymt.engine.layers.backend import triton_interpreter_on_cpu, triton_interpreter_unavailable

    reason = triton_interpreter_unavailable()  # e.g. an earlier test imported triton compiled
    if reason:
        pytest.skip(f"Triton interpreter unavailable in this process: {reason}")
    with triton_interpreter_on_cpu():
        yield
