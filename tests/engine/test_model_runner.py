import numpy as np
import pytest
import torch

from hymt.engine.batch import ScheduledSeq, StepBatch
from hymt.engine.config import EngineConfig
from hymt.engine.cuda_graph import bucket_for, graph_buckets
from hymt.engine.input_buffers import PAD_SLOT, InputBuffers, fill_step_inputs
from hymt.engine.layers.metadata_builder import SeqChunk, build_attention_metadata
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


def mixed_batch() -> StepBatch:
    return StepBatch([
        ScheduledSeq(0, [11], 9, [3, 7, 2], True),  # decode at position 9
        ScheduledSeq(1, [1, 2, 3, 4, 5, 6], 0, [4, 5], True),  # fresh prompt
        ScheduledSeq(2, [8, 9, 10], 5, [6, 1], False),  # middle chunk after a cached prefix
        ScheduledSeq(3, [12], 3, [8], True),
    ])


def buffers(max_tokens=64, max_seqs=8, max_cols=8):
    return InputBuffers(max_tokens, max_seqs, max_cols, torch.device("cpu"))


def test_fill_matches_the_reference_metadata_builder():
    batch = mixed_batch()
    bufs = buffers()
    layout = bufs.fill(batch, BS)
    got = bufs.metadata(layout)
    ref = build_attention_metadata(
        [SeqChunk(s.start_pos, len(s.token_ids), tuple(s.block_table), s.sample) for s in batch.seqs], BS, "cpu"
    )
    for name in ("positions", "slot_mapping", "query_start_loc", "seq_lens", "block_tables", "logits_indices"):
        assert torch.equal(getattr(got, name), getattr(ref, name)), name
    assert (got.max_query_len, got.max_seq_len, got.is_decode_only) == (6, 9 + 1, False)
    assert bufs.input_ids(layout).tolist() == [11, 1, 2, 3, 4, 5, 6, 8, 9, 10, 12]
    assert layout.num_sample == 3


def test_decode_padding_rows_are_inert():
    batch = StepBatch([ScheduledSeq(0, [5], 17, [2, 3, 9, 4, 1], True), ScheduledSeq(1, [6], 2, [7], True)])
    bufs = {k: v.copy() for k, v in buffers().np.items()}
    layout = fill_step_inputs(batch, BS, bufs, pad_to=4, num_cols=8, max_seq_len=32)
    assert (layout.num_tokens, layout.num_seqs, layout.num_real_seqs, layout.num_cols) == (4, 4, 2, 8)
    assert layout.is_decode_only and layout.max_seq_len == 32
    assert bufs["slot_mapping"][:4].tolist() == [1 * 4 + 1, 7 * 4 + 2, PAD_SLOT, PAD_SLOT]  # table[17 // 4] = 1
    assert bufs["seq_lens"][:4].tolist() == [18, 3, 1, 1]
    assert bufs["query_start_loc"][:5].tolist() == [0, 1, 2, 3, 4]
    table = bufs["block_tables"][:32].reshape(4, 8)
    assert table[0].tolist() == [2, 3, 9, 4, 1, 0, 0, 0] and not table[2:].any()
    assert bufs["logits_indices"][:4].tolist() == [0, 1, 2, 3]


def test_fill_clears_stale_table_entries():
    bufs = {k: v.copy() for k, v in buffers().np.items()}
    fill_step_inputs(StepBatch([ScheduledSeq(0, [1], 20, [5, 6, 7, 8, 9, 10], True)]), BS, bufs, num_cols=8)
    fill_step_inputs(StepBatch([ScheduledSeq(0, [1], 2, [3], True)]), BS, bufs, num_cols=8)
    assert bufs["block_tables"][:8].tolist() == [3, 0, 0, 0, 0, 0, 0, 0]


def test_only_decode_batches_pad():
    with pytest.raises(ValueError, match="decode-only"):
        fill_step_inputs(mixed_batch(), BS, buffers().np, pad_to=8)


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
