import numpy as np
import pytest
import torch

from hymt.engine.batch import ScheduledSeq, StepBatch
from hymt.engine.config import EngineConfig
from hymt.engine.cuda_graph import bucket_for, graph_buckets
from hymt.engine.memory import MemoryReport
from hymt.engine.model_runner import ModelRunner

BS = 4


def test_graph_buckets():
    b = graph_buckets(512)
    assert b[:7] == [1, 2, 4, 8, 16, 24, 32] and b[-1] == 512
    assert b == sorted(set(b))
    assert all((hi - lo) / hi <= 0.2 for lo, hi in zip(b[6:], b[7:]))
    assert graph_buckets(20) == [1, 2, 4, 8, 16, 20]
    assert graph_buckets(1000)[-1] == 1000
    assert bucket_for(1, b) == 1 and bucket_for(3, b) == 4 and bucket_for(17, b) == 24
    assert bucket_for(512, b) == 512 and bucket_for(513, b) is None


@pytest.fixture(scope="module")
def runner(tiny_config):
    cfg = EngineConfig(max_num_seqs=4, max_num_batched_tokens=32, max_model_len=32, block_size=BS, num_kv_blocks=12)
    return ModelRunner(dict(tiny_config), cfg, device=torch.device("cpu"), dtype=torch.float32,
                       random_weights=True)


def test_runner_logits_rows_and_kv_consistency(runner):
    prompt = [5, 9, 13, 2, 7, 30, 44]
    # one sequence in two steps (prefill 6, then a decode of the 7th token) ...
    runner.execute(StepBatch([ScheduledSeq(0, prompt[:6], 0, [1, 2], False)]))
    step2 = runner.execute(StepBatch([ScheduledSeq(0, prompt[6:], 6, [1, 2], True)]))
    # ... gives the logits of the same sequence prefilled at once into other blocks.
    whole = runner.execute(StepBatch([ScheduledSeq(1, prompt, 0, [3, 4], True),
                                      ScheduledSeq(2, prompt[:3], 0, [5], True)]))
    assert step2.shape == (1, runner.vocab_size) and whole.shape == (2, runner.vocab_size)
    assert step2.dtype == torch.float32
    torch.testing.assert_close(step2[0], whole[0], rtol=1e-5, atol=1e-5)
    none = runner.execute(StepBatch([ScheduledSeq(3, prompt[:3], 0, [6], False)]))
    assert none.shape == (0, runner.vocab_size)


def test_runner_memory_report_on_cpu(runner):
    report = runner.memory_report()
    assert isinstance(report, MemoryReport)
    assert report.num_kv_blocks == 12 and report.device == "cpu" and report.cuda_graph_bytes == 0
    per_block = 2 * 2 * BS * 2 * 16 * 4  # K+V x layers x tokens x kv heads x head_dim x fp32
    assert report.kv_block_bytes == per_block and report.kv_cache_bytes == 12 * per_block
    assert report.weights_bytes > 0 and report.budget_bytes is None
    assert report.kv_cache_dtype == "fp32"  # "auto" = the model dtype
    assert len(runner.graphs) == 0  # CPU: always eager


def test_runner_cpu_default_block_count(tiny_config):
    cfg = EngineConfig(max_num_seqs=3, max_num_batched_tokens=16, max_model_len=32, block_size=BS)
    r = ModelRunner(dict(tiny_config), cfg, device=torch.device("cpu"), dtype=torch.float32, random_weights=True)
    assert r.num_kv_blocks == 3 * (32 // BS) + 1
    assert np.prod(r.kv_caches[0][0].shape) == r.num_kv_blocks * BS * 2 * 16
