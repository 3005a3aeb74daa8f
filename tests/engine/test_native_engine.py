import pytest

from hymt.engine.config import EngineConfig
from hymt.engine.interface import EngineStats
from hymt.engine.native_engine import NativeEngine
from hymt.engine.run_to_completion import run_to_completion
from hymt.engine.sampling import SamplingParams
from hymt.engine.step_kinds import StepKinds
from hymt.errors import EngineError, InvalidInputError


def make_engine(tiny_config, **cfg) -> NativeEngine:
    base = dict(max_num_seqs=8, max_num_batched_tokens=64, max_model_len=64, block_size=4, num_kv_blocks=64)
    base.update(cfg)
    return NativeEngine(dict(tiny_config), EngineConfig(**base), device="cpu", random_weights=True)


@pytest.fixture(scope="module")
def engine(tiny_config):
    eng = make_engine(tiny_config)
    yield eng
    eng.close()


PROMPTS = [[5, 6, 7], [8, 9, 10, 11, 12, 13, 14], [20] * 12, [33]]


def run(engine, prompt_ids, params):
    """Every output of one request, step by step."""
    steps = []
    run_to_completion(engine, [(prompt_ids, params)], on_output=steps.append)
    return steps


def test_generate_in_order_with_forced_lengths(engine):
    outs = engine.generate(PROMPTS, [SamplingParams(max_tokens=n, ignore_eos=True) for n in (3, 5, 1, 4)])
    assert [len(o.token_ids) for o in outs] == [3, 5, 1, 4]
    assert all(o.finished and o.finish_reason == "length" for o in outs)
    assert [o.prompt_token_ids for o in outs] == PROMPTS
    assert all(0 <= t < engine.vocab_size for o in outs for t in o.token_ids)


def test_step_outputs_stream_the_tokens(engine):
    steps = run(engine, [4, 5, 6], SamplingParams(max_tokens=4, ignore_eos=True))
    assert [len(o.new_token_ids) for o in steps] == [1, 1, 1, 1]
    final = steps[-1]
    assert [t for o in steps for t in o.new_token_ids] == final.token_ids
    assert [o.finished for o in steps] == [False, False, False, True]
    assert final.arrival_time <= final.first_token_time <= final.finish_time


def test_stop_token_ends_without_being_returned(engine):
    first = engine.generate([[9, 9, 9]], SamplingParams(max_tokens=1))[0].token_ids[0]
    steps = run(engine, [9, 9, 9], SamplingParams(max_tokens=5, stop_token_ids=(first,)))
    assert len(steps) == 1
    out = steps[0]
    assert out.finished and out.finish_reason == "stop"
    assert out.token_ids == [] and out.new_token_ids == []
    ignored = engine.generate([[9, 9, 9]], SamplingParams(max_tokens=2, stop_token_ids=(first,), ignore_eos=True))
    assert ignored[0].token_ids[0] == first and ignored[0].finish_reason == "length"


def test_default_stop_ids_come_from_the_checkpoint(engine, tiny_config):
    assert engine.stop_token_ids == (tiny_config["eos_token_id"],)


def test_seeded_sampling_is_reproducible_across_batches(engine):
    params = SamplingParams(temperature=1.0, top_p=0.9, max_tokens=6, seed=7, ignore_eos=True)
    alone = engine.generate([[3, 4, 5]], params)[0].token_ids
    others = [SamplingParams(temperature=0.8, max_tokens=n, ignore_eos=True) for n in (2, 9, 4)]
    mixed = engine.generate([[40, 41], [3, 4, 5], [7] * 9, [12]], [others[0], params, others[1], others[2]])
    assert mixed[1].token_ids == alone
    unseeded = SamplingParams(temperature=1.0, max_tokens=6, ignore_eos=True)
    draws = {tuple(engine.generate([[3, 4, 5]], unseeded)[0].token_ids) for _ in range(3)}
    assert len(draws) > 1  # each unseeded request gets its own seed


@pytest.mark.parametrize("prompt,field,message", [
    ([], "prompt_token_ids", "must not be empty"),
    ([1, 2, 301], "prompt_token_ids", r"outside the vocabulary \[0, 301\)"),
    ([-1], "prompt_token_ids", "outside the vocabulary"),
    (["a"], "prompt_token_ids", "integer token ids"),
    ([1] * 60, "max_tokens", "max_model_len=64"),
])
def test_bad_requests_are_rejected_at_add(engine, prompt, field, message):
    with pytest.raises(InvalidInputError, match=message) as e:
        engine.add_request(prompt, SamplingParams(max_tokens=8))
    assert e.value.field == field
    assert not engine.has_unfinished()


def test_requests_larger_than_the_kv_cache_are_rejected(tiny_config):
    eng = make_engine(tiny_config, num_kv_blocks=5)  # 4 usable blocks = 16 tokens
    with pytest.raises(InvalidInputError, match="KV cache holds only 4 blocks"):
        eng.add_request([1] * 10, SamplingParams(max_tokens=10))
    eng.add_request([1] * 10, SamplingParams(max_tokens=6))  # exactly 16 tokens fits
    with pytest.raises(InvalidInputError, match="SamplingParams"):
        eng.add_request([1], {"max_tokens": 3})
    eng.close()


def test_duplicate_request_id(engine):
    engine.add_request([1, 2], SamplingParams(max_tokens=2), "same")
    with pytest.raises(InvalidInputError, match="already in use"):
        engine.add_request([1, 2], SamplingParams(max_tokens=2), "same")
    engine.abort("same")
    engine.step()


def test_abort_frees_blocks_and_reports_abort(engine):
    rid = engine.add_request([1] * 10, SamplingParams(max_tokens=20, ignore_eos=True))
    engine.step()
    engine.step()
    assert engine.stats().kv_blocks_used > 0
    engine.abort(rid)
    assert engine.stats().kv_blocks_used == 0 and not engine.has_unfinished()
    outs = engine.step()
    assert [(o.request_id, o.finish_reason, len(o.token_ids)) for o in outs] == [(rid, "abort", 2)]
    engine.abort("never-existed")  # ignored


def test_stats_count_tokens(tiny_config):
    eng = make_engine(tiny_config)
    eng.generate([[1, 2, 3], [4, 5]], SamplingParams(max_tokens=3, ignore_eos=True))
    stats = eng.stats()
    assert isinstance(stats, EngineStats)
    assert stats.prompt_tokens_total == 5 and stats.generated_tokens_total == 6
    assert stats.generation_steps_total == 3  # both sequences in every step
    # A CPU has no CUDA graphs: the three steps ran eagerly, and no graph padded anything.
    # Tokens computed: the 5 prompt tokens, then the 2 x 2 generated tokens fed back (the last is not).
    assert stats.step_kinds == StepKinds(decode_graph=0, step_graph=0, eager=3, tokens=9, padding_tokens=0)
    assert stats.kv_blocks_total == 63 and stats.kv_blocks_used == 0
    assert (stats.num_running, stats.num_waiting) == (0, 0)
    assert eng.memory_report().num_kv_blocks == 64
    eng.close()
    eng.close()  # idempotent
    with pytest.raises(EngineError, match="closed"):
        eng.add_request([1], SamplingParams())


def test_bad_device_and_dtype(tiny_config):
    with pytest.raises(InvalidInputError, match="dtype must be one of") as e:
        NativeEngine(dict(tiny_config), EngineConfig(num_kv_blocks=8), device="cpu", dtype="int3", random_weights=True)
    assert e.value.field == "dtype"
    with pytest.raises(InvalidInputError, match="not a torch device"):
        NativeEngine(dict(tiny_config), device="gpu0", random_weights=True)


def test_overlapped_steps_match_sequential_steps(tiny_config):
    """Overlap (step n launched before n-1's ids are read) changes timing, never tokens."""
    stops = tuple(range(3, 300, 9))  # frequent stop tokens: finishes discovered one step late
    prompts = [[(7 * i + j) % 300 for j in range(3 + i % 17)] for i in range(24)]
    params = [SamplingParams(max_tokens=4 + i % 9, temperature=1.0 if i % 2 else 0.0, top_k=40, top_p=0.9,
                             repetition_penalty=1.1, stop_token_ids=stops, seed=i) for i in range(24)]
    results = {}
    for overlap in (False, True):
        eng = NativeEngine(dict(tiny_config), EngineConfig(max_num_seqs=6, max_num_batched_tokens=24, max_model_len=64,
                                                           block_size=4, num_kv_blocks=14, overlap=overlap),
                           device="cpu", random_weights=True)
        outs = eng.generate(prompts, params)
        results[overlap] = [(o.token_ids, o.finish_reason) for o in outs]
        assert eng.scheduler.num_preemptions > 0
        assert not eng.has_unfinished() and eng.block_manager.num_used_blocks == 0
        eng.close()
    assert results[True] == results[False]
    assert {r for _, r in results[True]} == {"stop", "length"}


def test_overlap_returns_each_step_one_step_late(tiny_config):
    eng = NativeEngine(dict(tiny_config), EngineConfig(max_num_seqs=4, max_num_batched_tokens=32, max_model_len=64,
                                                       block_size=4, num_kv_blocks=20, overlap=True),
                       device="cpu", random_weights=True)
    eng.add_request([1, 2, 3], SamplingParams(max_tokens=2, ignore_eos=True), "a")
    assert eng.step() == []  # step 1 launched; nothing read yet
    first = eng.step()  # reads step 1, launches step 2
    assert [len(o.token_ids) for o in first] == [1]
    assert eng.has_unfinished()
    last = eng.step()  # nothing left to launch: reads step 2
    assert last[0].finished and len(last[0].token_ids) == 2
    assert not eng.has_unfinished()
    eng.close()


def test_step_profile(tiny_config):
    eng = make_engine(tiny_config, step_profile="cpu")
    eng.generate([[1, 2, 3], [4, 5]], SamplingParams(max_tokens=3, ignore_eos=True))
    prof = eng.timer.summary()
    assert prof.steps == 3 and prof.tokens == 5 + 2 + 2 and set(prof.seconds) >= {"schedule", "forward", "wait"}
    assert all(v >= 0 for v in prof.seconds.values()) and "ms/step" in prof.format()
    eng.close()
