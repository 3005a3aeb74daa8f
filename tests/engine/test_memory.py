import pytest
import torch

from hymt.engine import memory as mem
from hymt.engine.config import EngineConfig
from hymt.engine.network import kv_bytes_per_block
from hymt.errors import EngineError

HY_1_8B = dict(hidden_size=2048, intermediate_size=6144, vocab_size=120818, num_hidden_layers=32,
               num_attention_heads=16, num_key_value_heads=4, head_dim=128, tie_word_embeddings=True)
HY_7B = dict(hidden_size=4096, intermediate_size=14336, vocab_size=128167, num_hidden_layers=32,
             num_attention_heads=32, num_key_value_heads=8, head_dim=128, tie_word_embeddings=True)


def test_real_shapes_match_the_derived_sizes():
    # docs/reference/models.md §2.1: 1.791 B params (3.58 GB bf16), 64 KiB KV per token; 7B: 15.0 GB, 128 KiB
    assert mem.estimate_weight_bytes(HY_1_8B, torch.bfloat16) == pytest.approx(3.58e9, rel=0.005)
    assert mem.estimate_weight_bytes(HY_7B, torch.bfloat16) == pytest.approx(15.0e9, rel=0.005)
    assert kv_bytes_per_block(HY_1_8B, 1, torch.bfloat16) == 64 * 1024
    assert kv_bytes_per_block(HY_7B, 16, torch.bfloat16) == 16 * 128 * 1024
    # int8 weights halve the linear layers, not the (bf16) embedding
    int8 = mem.estimate_weight_bytes(HY_1_8B, torch.bfloat16, "int8")
    assert 3.58e9 / 2 < int8 < 3.58e9 * 0.6


def test_budget_from_gb_or_fraction():
    assert mem.budget_bytes(EngineConfig(gpu_memory_gb=8.0), 141e9) == 8e9
    assert mem.budget_bytes(EngineConfig(gpu_memory_utilization=0.5), 100e9) == 50e9


def test_plan_kv_blocks_uses_what_is_left():
    # 8 GB - 5 GB used - margin (256 MiB + 2 % of 8 GB = 428,435,456 B) = 2,571,564,544 B = 2452.4 MiB
    blocks = mem.plan_kv_blocks(budget=8 * 10**9, used=5 * 10**9, block_bytes=2**20, min_blocks=10)
    assert blocks == 2452
    # 2.5 GB free on the device - the same margin = 2,071,564,544 B = 1975.6 MiB
    capped = mem.plan_kv_blocks(budget=8 * 10**9, used=5 * 10**9, block_bytes=2**20, min_blocks=10,
                                free_device_bytes=25 * 10**8)
    assert capped == 1975


def test_budget_too_small_says_how_much_is_needed():
    with pytest.raises(EngineError, match=r"about \d+\.\d\d GB are needed"):
        mem.plan_kv_blocks(budget=4 * 10**9, used=4 * 10**9, block_bytes=2**20, min_blocks=257)
    with pytest.raises(EngineError, match=r"weights alone need 3\.58 GB"):
        mem.check_weights_fit(mem.estimate_weight_bytes(HY_1_8B, torch.bfloat16), 2 * 10**9, measured=False)
    mem.check_weights_fit(10, 20, measured=True)  # fits: no error


def test_cpu_default_is_bounded():
    cfg = EngineConfig(max_num_seqs=4, max_model_len=64, block_size=16)
    assert mem.default_cpu_blocks(cfg, block_bytes=1024) == 4 * 4 + 1  # every sequence at full length + null
    big = EngineConfig(max_num_seqs=512, max_model_len=4096, block_size=16)
    assert mem.default_cpu_blocks(big, block_bytes=2**19) == 512 + 1  # 256 MiB of 512 KiB blocks
    assert mem.default_cpu_blocks(big, block_bytes=2**30) == 256 + 1  # never below one 4096-token sequence
