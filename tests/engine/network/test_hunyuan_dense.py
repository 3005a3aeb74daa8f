"""The native forward pass against transformers' HunYuanDenseV1ForCausalLM (float32, CPU).

Teacher forcing: every token's logits, computed through the paged cache in chunks (prefill
split across steps, several sequences per step, prefixes shared through the block table,
decode steps), must match transformers' logits of the whole sequence.
"""
from __future__ import annotations

import math
import random

import pytest
import torch
from conftest import FAMILIES, make_hf_model

from hymt.engine.attention_metadata import AttentionMetadata
from hymt.engine.batch import ScheduledSeq, StepBatch
from hymt.engine.loader import load_model
from hymt.engine.network import allocate_kv_cache, kv_bytes_per_block
from hymt.engine.step_inputs import build_step_inputs

BLOCK = 4
TOL = 1e-4


def hf_logits(hf, ids: list[int]) -> torch.Tensor:
    with torch.no_grad():
        return hf(torch.tensor([ids])).logits[0].float()


class Runner:
    """Drives the model step by step over a shuffled pool of KV blocks."""

    def __init__(self, model, seqs: dict[str, list[int]], num_blocks: int = 64, seed: int = 0):
        self.model, self.seqs = model, seqs
        self.caches = allocate_kv_cache(model, num_blocks, BLOCK, torch.float32, "cpu")
        pool = list(range(1, num_blocks))  # block 0 is the null block, as in the engine
        random.Random(seed).shuffle(pool)
        self.tables = {s: [pool.pop() for _ in range(math.ceil(len(t) / BLOCK))] for s, t in seqs.items()}
        self.done = {s: 0 for s in seqs}
        self.logits: dict[str, list[torch.Tensor]] = {s: [] for s in seqs}

    def share_prefix(self, src: str, dst: str, num_blocks: int) -> None:
        """dst reuses src's first blocks (same tokens) and starts after them, as a prefix-cache hit."""
        assert self.seqs[src][: num_blocks * BLOCK] == self.seqs[dst][: num_blocks * BLOCK]
        self.tables[dst][:num_blocks] = self.tables[src][:num_blocks]
        self.done[dst] = num_blocks * BLOCK

    def step(self, plan: list[tuple[str, int]], pad_tokens_to: int | None = None) -> AttentionMetadata:
        batch = StepBatch([ScheduledSeq(i, self.seqs[s][self.done[s] : self.done[s] + n], self.done[s],
                                        list(self.tables[s]), True) for i, (s, n) in enumerate(plan)])
        inputs = build_step_inputs(batch, BLOCK, "cpu", all_logits=True, pad_tokens_to=pad_tokens_to)
        meta = inputs.metadata
        with torch.no_grad():
            hidden = self.model(inputs.input_ids, meta, self.caches)
            logits = self.model.compute_logits(hidden[meta.logits_indices])
        for (s, n), part in zip(plan, logits.split([n for _, n in plan])):
            self.logits[s].append(part)
            self.done[s] += n
        return meta

    def result(self, s: str) -> torch.Tensor:
        return torch.cat(self.logits[s])


def mixed_schedule(runner: Runner) -> None:
    """Chunked prefill, mixed prefill + decode steps, then decode-only steps."""
    runner.step([("a", 10), ("b", 5)])
    runner.step([("a", 7), ("b", 8), ("c", 21)])
    runner.step([("a", 1), ("b", 1), ("c", 3)])
    for _ in range(4):
        runner.step([("a", 1), ("b", 1), ("c", 1)])


def padded_schedule(runner: Runner) -> None:
    """mixed_schedule with every step padded to the next step-graph size (cuda_graph.py)."""
    for plan, size in (([("a", 10), ("b", 5)], 16), ([("a", 7), ("b", 8), ("c", 21)], 64),
                       ([("a", 1), ("b", 1), ("c", 3)], 16)):
        runner.step(plan, pad_tokens_to=size)
    for _ in range(4):
        runner.step([("a", 1), ("b", 1), ("c", 1)], pad_tokens_to=16)


def make_seqs(vocab: int, seed: int = 1) -> dict[str, list[int]]:
    rng = random.Random(seed)
    return {s: [rng.randrange(vocab) for _ in range(n)] for s, n in (("a", 22), ("b", 18), ("c", 28))}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_teacher_forced_logits_match_transformers(hf_checkpoint, family):
    path, hf = hf_checkpoint(family)
    model = load_model(path, "cpu", torch.float32)
    seqs = make_seqs(model.vocab_size)
    runner = Runner(model, seqs)
    mixed_schedule(runner)
    for s, ids in seqs.items():
        got, ref = runner.result(s), hf_logits(hf, ids)
        assert got.shape == ref.shape == (len(ids), model.vocab_size)
        assert (got - ref).abs().max().item() < TOL, f"{family} seq {s}"


def test_prefix_shared_through_block_table_matches(hf_checkpoint):
    path, hf = hf_checkpoint("hy-mt-1.8b")
    model = load_model(path, "cpu", torch.float32)
    prefix = make_seqs(model.vocab_size, seed=3)["a"][:12]
    seqs = {"a": prefix + [5, 6, 7, 8, 9], "b": prefix + [11, 12, 13, 14, 15, 16, 17]}
    runner = Runner(model, seqs)
    runner.step([("a", 17)])
    runner.share_prefix("a", "b", 3)  # 12 tokens = 3 full blocks already cached
    runner.step([("b", 5)])  # a prompt chunk after a cached prefix
    runner.step([("b", 1)])
    runner.step([("b", 1)])
    ref = hf_logits(hf, seqs["b"])[12:]
    assert (runner.result("b") - ref).abs().max().item() < TOL


def test_padding_rows_of_a_decode_step_are_inert(hf_checkpoint):
    """CUDA-graph padding (slot -1, seq_len 0) writes nothing and changes no real row."""
    path, _ = hf_checkpoint("hy-mt-1.8b")
    model = load_model(path, "cpu", torch.float32)
    seqs = make_seqs(model.vocab_size)
    plain, padded = Runner(model, seqs), Runner(model, seqs)
    for r in (plain, padded):
        r.step([("a", 9), ("b", 9), ("c", 9)])
    want = plain.step([("a", 1), ("b", 1), ("c", 1)])
    ids = torch.tensor([seqs[s][9] for s in "abc"] + [0, 0])
    meta = _pad_decode(want, 2)
    before = [k.clone() for k, _ in padded.caches]
    with torch.no_grad():
        got = model.compute_logits(model(ids, meta, padded.caches))
    assert torch.allclose(got[:3], torch.stack([plain.logits[s][-1][0] for s in "abc"]), atol=1e-6)
    for (k, _), old in zip(padded.caches, before):
        changed = (k != old).flatten(1).any(dim=1).nonzero().flatten().tolist()
        written = sorted({int(x) // BLOCK for x in want.slot_mapping})
        assert changed == written  # only the real rows' blocks changed


def test_padding_tokens_of_a_step_graph_are_inert(hf_checkpoint):
    """Steps padded to a step graph's token count (one padding sequence over the null block)
    give transformers' logits, and leave every cache block but the null block as unpadded
    steps leave it."""
    path, hf = hf_checkpoint("hy-mt-1.8b")
    model = load_model(path, "cpu", torch.float32)
    seqs = make_seqs(model.vocab_size)
    plain, padded = Runner(model, seqs), Runner(model, seqs)
    mixed_schedule(plain)
    padded_schedule(padded)
    for s, ids in seqs.items():
        assert (padded.result(s) - hf_logits(hf, ids)).abs().max().item() < TOL, s
    for (k_plain, v_plain), (k_pad, v_pad) in zip(plain.caches, padded.caches):
        # Padded GEMMs may round differently in the last bit: close, not equal.
        torch.testing.assert_close(k_pad[1:], k_plain[1:], rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(v_pad[1:], v_plain[1:], rtol=1e-5, atol=1e-5)
        assert k_plain[0].abs().sum() == 0 and k_pad[0].abs().sum() > 0  # the padding wrote its K/V there


def _pad_decode(meta: AttentionMetadata, extra: int) -> AttentionMetadata:
    n = meta.seq_lens.shape[0]
    return AttentionMetadata(
        positions=torch.cat([meta.positions, torch.zeros(extra, dtype=torch.int64)]),
        slot_mapping=torch.cat([meta.slot_mapping, torch.full((extra,), -1, dtype=torch.int64)]),
        query_start_loc=torch.arange(n + extra + 1, dtype=torch.int32),
        seq_lens=torch.cat([meta.seq_lens, torch.zeros(extra, dtype=torch.int32)]),
        block_tables=torch.cat([meta.block_tables, torch.zeros(extra, meta.block_tables.shape[1], dtype=torch.int32)]),
        max_query_len=1, max_seq_len=meta.max_seq_len, is_decode_only=True,
        logits_indices=torch.arange(n + extra),
        prefill_items=torch.stack([torch.arange(n + extra), torch.zeros(n + extra, dtype=torch.int64)], 1).int(),
    )


def test_without_qk_norm_matches_transformers_with_identity_norms(tmp_path):
    from safetensors.torch import save_file

    hf = make_hf_model(FAMILIES["hy-mt-1.8b"], seed=5)
    for layer in hf.model.layers:
        layer.self_attn.query_layernorm = torch.nn.Identity()
        layer.self_attn.key_layernorm = torch.nn.Identity()
    hf.config.save_pretrained(tmp_path)
    state = {k: v.contiguous() for k, v in hf.state_dict().items() if k != "lm_head.weight"}
    save_file(state, tmp_path / "model.safetensors")
    cfg = (tmp_path / "config.json").read_text().replace('"use_qk_norm": true', '"use_qk_norm": false')
    (tmp_path / "config.json").write_text(cfg)
    model = load_model(tmp_path, "cpu", torch.float32)
    seqs = make_seqs(model.vocab_size)
    runner = Runner(model, seqs)
    mixed_schedule(runner)
    assert (runner.result("c") - hf_logits(hf, seqs["c"])).abs().max().item() < TOL


def test_triton_path_matches_transformers_under_interpreter(hf_checkpoint):
    """The CUDA code path (fused RoPE/norm/store, prefill and decode kernels) run on CPU."""
    from hymt.engine.layers.kernel_choice import triton_interpreter_on_cpu, triton_interpreter_unavailable

    reason = triton_interpreter_unavailable()  # e.g. an earlier test imported triton compiled
    if reason:
        pytest.skip(f"Triton interpreter unavailable in this process: {reason}")
    path, hf = hf_checkpoint("hunyuan-7b")
    model = load_model(path, "cpu", torch.float32)
    seqs = make_seqs(model.vocab_size)
    with triton_interpreter_on_cpu():
        assert model.layers[0].self_attn.attn.uses_triton(torch.empty(1))
        runner = Runner(model, seqs)
        mixed_schedule(runner)
    for s, ids in seqs.items():
        assert (runner.result(s) - hf_logits(hf, ids)).abs().max().item() < TOL, s


def test_kv_cache_shapes_and_bytes():
    from hymt.engine.network import HunyuanDenseConfig

    real = dict(vocab_size=120818, hidden_size=2048, intermediate_size=6144, num_hidden_layers=32,
                num_attention_heads=16, num_key_value_heads=4, head_dim=128)
    # docs/reference/models.md §2.1: 64 KiB of bf16 K+V per token for the 1.8B.
    assert kv_bytes_per_block(real, 16, torch.bfloat16) == 16 * 64 * 1024
    assert kv_bytes_per_block(HunyuanDenseConfig.from_dict(real), 1, torch.float32) == 128 * 1024
    caches = allocate_kv_cache({**real, "num_hidden_layers": 2}, 3, 16, torch.float16, "cpu")
    assert len(caches) == 2
    assert all(t.shape == (3, 16, 4, 128) and t.dtype == torch.float16 for pair in caches for t in pair)


def test_runner_properties(hf_checkpoint):
    path, _ = hf_checkpoint("hunyuan-7b")
    model = load_model(path, "cpu", torch.float32)
    assert (model.vocab_size, model.num_layers, model.num_kv_heads, model.head_dim, model.hidden_size) == (
        263, 2, 1, 16, 64)
    assert model.dtype == torch.float32 and model.device.type == "cpu"


def test_forward_rejects_wrong_number_of_caches(hf_checkpoint):
    path, _ = hf_checkpoint("hy-mt-1.8b")
    model = load_model(path, "cpu", torch.float32)
    inputs = build_step_inputs(StepBatch([ScheduledSeq(0, [1, 2, 3], 0, [0], True)]), BLOCK, "cpu")
    with pytest.raises(ValueError, match="kv_caches has 1 layers"):
        model(inputs.input_ids, inputs.metadata, allocate_kv_cache(model, 2, BLOCK, torch.float32, "cpu")[:1])
