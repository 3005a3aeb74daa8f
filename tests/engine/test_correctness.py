"""Greedy tokens of the native engine == transformers generate(), on tiny float32 checkpoints.

The reference runs one prompt at a time without padding. The engine runs all prompts
together under each scheduling regime: one batch, requests arriving mid-run, preemption
forced by a small KV cache, streaming through AsyncEngine, chunked prefill forced by a small
token budget, prefix caching over shared prefixes, and overlapped steps (the CUDA default:
step n launched before step n-1's ids are read) with preemption and arrivals.
"""
from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass

import pytest
import torch

from hymt.engine.async_engine import AsyncEngine
from hymt.engine.config import EngineConfig
from hymt.engine.native_engine import NativeEngine
from hymt.engine.sampling import SamplingParams

FAMILIES = ["HY-MT1.5-1.8B", "Hunyuan-MT-7B", "HY-MT1.5-7B", "Hy-MT2-1.8B", "Hy-MT2-7B", "Hunyuan-MT-Chimera-7B"]
NUM_PROMPTS = 50
MAX_MODEL_LEN = 96
BLOCK = 4


@dataclass
class Case:
    checkpoint: object
    prompts: list[list[int]]
    params: list[SamplingParams]
    expected: list[list[int]]


def make_prompts(rng: random.Random, vocab: int) -> list[list[int]]:
    """50 prompts of 3..60 tokens; 30 of them share one of three prefixes (8, 16, 24 tokens)."""
    prefixes = [[rng.randrange(vocab) for _ in range(n)] for n in (8, 16, 24)]
    prompts = []
    for i in range(NUM_PROMPTS):
        if i % 5 < 3:
            prefix = prefixes[i % 3]
            suffix = [rng.randrange(vocab) for _ in range(rng.randrange(1, 61 - len(prefix)))]
            prompts.append(prefix + suffix)
        else:
            prompts.append([rng.randrange(vocab) for _ in range(rng.randrange(3, 61))])
    return prompts


def reference(model, prompts, max_tokens) -> list[list[int]]:
    from transformers import GenerationConfig

    never = int(model.config.vocab_size)  # an "eos" the model cannot produce: lengths are forced
    # generate() merges the checkpoint's generation_config (repetition_penalty 1.05) into ours;
    # the reference must be plain greedy.
    model.generation_config = GenerationConfig(pad_token_id=0)
    out = []
    for prompt, n in zip(prompts, max_tokens):
        ids = torch.tensor([prompt])
        config = GenerationConfig(max_new_tokens=n, do_sample=False, repetition_penalty=1.0, eos_token_id=never,
                                  pad_token_id=0)
        with torch.no_grad():
            generated = model.generate(ids, attention_mask=torch.ones_like(ids), generation_config=config)
        out.append(generated[0, len(prompt):].tolist())
    return out


@pytest.fixture(scope="module", params=FAMILIES)
def case(request, tmp_path_factory) -> Case:
    from transformers import AutoModelForCausalLM

    from hymt.checkpoint import load_checkpoint
    from hymt.testing import write_tiny_checkpoint

    directory = write_tiny_checkpoint(tmp_path_factory.mktemp("correct") / request.param, request.param)
    checkpoint = load_checkpoint(directory)
    model = AutoModelForCausalLM.from_pretrained(directory, dtype=torch.float32).eval()
    rng = random.Random(request.param)
    prompts = make_prompts(rng, int(checkpoint.config["vocab_size"]))
    max_tokens = [rng.randrange(5, 21) for _ in prompts]
    expected = reference(model, prompts, max_tokens)
    params = [SamplingParams(max_tokens=n, ignore_eos=True) for n in max_tokens]
    return Case(checkpoint, prompts, params, expected)


def engine_for(case: Case, *, overlap: bool = False, **overrides) -> NativeEngine:
    cfg = dict(max_num_seqs=64, max_num_batched_tokens=4096, max_model_len=MAX_MODEL_LEN, block_size=BLOCK,
               num_kv_blocks=1200, enable_prefix_caching=False, overlap=overlap)
    cfg.update(overrides)
    return NativeEngine(case.checkpoint, EngineConfig(**cfg), device="cpu", dtype=torch.float32)


def assert_matches(case: Case, got: list[list[int]]) -> None:
    mismatched = [i for i, (g, e) in enumerate(zip(got, case.expected)) if g != e]
    assert not mismatched, f"{len(mismatched)} prompts differ, first #{mismatched[0]}: " \
                           f"{got[mismatched[0]]} != {case.expected[mismatched[0]]}"
    assert len(got) == len(case.expected)


def test_one_batch(case):
    engine = engine_for(case)
    assert_matches(case, [o.token_ids for o in engine.generate(case.prompts, case.params)])


@pytest.mark.parametrize("overlap", [False, True], ids=["sync", "overlap"])
def test_requests_arriving_mid_run(case, overlap):
    engine = engine_for(case, overlap=overlap)
    ids: list[str] = []
    done = {}
    pending = list(zip(case.prompts, case.params))
    while pending or engine.has_unfinished():
        for prompt, params in pending[:7]:  # a few new requests join between steps
            ids.append(engine.add_request(prompt, params))
        pending = pending[7:]
        for _ in range(2):
            for out in engine.step():
                if out.finished:
                    done[out.request_id] = out.token_ids
    assert_matches(case, [done[i] for i in ids])


@pytest.mark.parametrize("overlap", [False, True], ids=["sync", "overlap"])
def test_preemption_by_recompute(case, overlap):
    engine = engine_for(case, num_kv_blocks=45, overlap=overlap)  # 44 usable blocks: two long requests
    outs = engine.generate(case.prompts, case.params)
    assert engine.scheduler.num_preemptions > 0
    assert_matches(case, [o.token_ids for o in outs])
    assert engine.block_manager.num_used_blocks == 0


def test_streamed_through_async_engine(case):
    engine = engine_for(case)
    with AsyncEngine(engine) as ae:
        async def run():
            handles = [ae.submit(p, sp) for p, sp in zip(case.prompts, case.params)]

            async def collect(h):
                deltas = [d async for d in h.stream()]
                return [t for d in deltas for t in d.new_token_ids], deltas[-1].token_ids

            return await asyncio.gather(*(collect(h) for h in handles))

        results = asyncio.run(run())
    assert_matches(case, [streamed for streamed, _ in results])
    assert all(streamed == final for streamed, final in results)


def test_chunked_prefill(case):
    budget = 16
    assert max(len(p) for p in case.prompts) > 2 * budget
    engine = engine_for(case, max_num_batched_tokens=budget, max_num_seqs=8)
    assert_matches(case, [o.token_ids for o in engine.generate(case.prompts, case.params)])


def test_prefix_caching(case):
    engine = engine_for(case, enable_prefix_caching=True, max_num_seqs=4)
    outs = engine.generate(case.prompts, case.params)
    assert engine.block_manager.prefix_hits >= 10
    assert_matches(case, [o.token_ids for o in outs])
