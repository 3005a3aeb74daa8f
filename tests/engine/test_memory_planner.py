"""MemoryPlanner on CPU (the plan and its report) and the profiling batch it measures CUDA with."""
import pytest
import torch

from hymt.engine.config import EngineConfig
from hymt.engine.memory_planner import MemoryPlanner, profile_batch
from hymt.engine.native_engine import start_model_runner
from hymt.errors import EngineError

CPU = torch.device("cpu")


def start(tiny_config, **config):
    cfg = EngineConfig(max_num_seqs=3, max_num_batched_tokens=16, max_model_len=32, block_size=4, **config)
    return start_model_runner(dict(tiny_config), cfg, device=CPU, dtype=torch.float32, random_weights=True)


def test_cpu_default_is_every_sequence_at_full_length(tiny_config):
    started = start(tiny_config)
    plan = started.plan
    assert plan.num_kv_blocks == 3 * (32 // 4) + 1  # + the null block
    # K + V x 2 layers x 4 tokens x 2 kv heads x head_dim 16 x 4 bytes (fp32)
    assert plan.kv_block_bytes == 2 * 2 * 4 * 2 * 16 * 4 == 2048
    assert plan.graph_buckets == () and plan.activation_bytes == 0 and plan.budget_bytes is None
    assert tuple(started.runner.kv_caches[0][0].shape) == (25, 4, 2, 16)


def test_the_report_of_a_fixed_cache(tiny_config):
    started = start(tiny_config, num_kv_blocks=12, kv_cache_dtype="bf16")
    report = started.plan.report(cuda_graph_bytes=0, sampler_bytes=started.sampler.state_bytes)
    assert (report.device, report.num_kv_blocks, report.kv_cache_dtype) == ("cpu", 12, "bf16")
    assert report.budget_bytes is None
    assert report.kv_block_bytes == 1024 and report.kv_cache_bytes == 12 * 1024
    assert report.sampler_bytes == 3 * 301  # max_num_seqs x vocab booleans
    assert report.peak_bytes == report.weights_bytes + 12 * 1024 + 3 * 301 and report.weights_bytes > 0


def test_plan_needs_the_weights_first(tiny_config):
    planner = MemoryPlanner(EngineConfig(num_kv_blocks=4), dict(tiny_config), CPU, torch.float32)
    with pytest.raises(EngineError, match="load_weights"):
        planner.plan(None, None)


def test_the_profiling_batch_is_long_sequences_then_single_tokens():
    batch = profile_batch(num_tokens=20, num_seqs=4, max_model_len=8, block_size=4)
    assert [len(s.token_ids) for s in batch.seqs] == [8, 8, 3, 1]
    assert batch.num_tokens == 20 and all(s.start_pos == 0 and s.sample for s in batch.seqs)
    assert [s.block_table for s in batch.seqs] == [[1, 2], [1, 2], [1, 2], [0]]  # shared blocks; the null block
