"""TransformersEngine against direct `model.generate` calls on a tiny float32 model."""
from __future__ import annotations

import pytest
import torch
from tokenizers import Tokenizer
from tokenizers.models import WordLevel

from hymt.checkpoint import Checkpoint
from hymt.engine.backends.transformers_engine import TransformersEngine
from hymt.engine.sampling import SamplingParams
from hymt.errors import InvalidInputError

PROMPTS = [[1, 2, 3], [4, 5, 6, 7, 8, 9], [10] * 17, [200, 7], [33, 44, 55, 66, 77, 88, 99, 11, 22]]
STOP = 300  # the engine's default stop id in these tests


def direct_greedy(model, prompt, max_new_tokens, eos):
    ids = torch.tensor([prompt])
    out = model.generate(
        input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=max_new_tokens, do_sample=False,
        eos_token_id=eos, pad_token_id=0, repetition_penalty=1.0, temperature=1.0, top_k=50, top_p=1.0,
    )
    row = out[0, len(prompt):].tolist()
    cut = next((i for i, t in enumerate(row) if t in eos), len(row))
    return row[:cut]


def test_greedy_matches_direct_generate(tiny_hf_model):
    engine = TransformersEngine(tiny_hf_model, stop_token_ids=[STOP])
    outs = engine.generate(PROMPTS, SamplingParams(max_tokens=10))
    for prompt, out in zip(PROMPTS, outs):
        assert out.token_ids == direct_greedy(tiny_hf_model, prompt, 10, [STOP])
        assert out.prompt_token_ids == prompt
        assert out.finished and out.finish_reason == "length" and len(out.token_ids) == 10
        assert out.new_token_ids == out.token_ids
        assert out.arrival_time <= out.first_token_time <= out.finish_time


def test_stop_ids_end_generation_and_are_dropped(tiny_hf_model):
    engine = TransformersEngine(tiny_hf_model, stop_token_ids=[STOP])
    free = engine.generate([PROMPTS[1]], SamplingParams(max_tokens=12))[0].token_ids
    stop = free[3]
    cut = free[: free.index(stop)]
    # Request-level stop ids and engine-level stop ids both end the answer.
    by_request = engine.generate([PROMPTS[1]], SamplingParams(max_tokens=12, stop_token_ids=(stop,)))[0]
    by_engine = TransformersEngine(tiny_hf_model, stop_token_ids=[stop]).generate(
        [PROMPTS[1]], SamplingParams(max_tokens=12))[0]
    for out in (by_request, by_engine):
        assert out.token_ids == cut
        assert out.finish_reason == "stop"


def test_ignore_eos_runs_to_max_tokens_through_stop_ids(tiny_hf_model):
    engine = TransformersEngine(tiny_hf_model, stop_token_ids=[STOP])
    free = engine.generate([PROMPTS[0]], SamplingParams(max_tokens=9))[0].token_ids
    forced = engine.generate([PROMPTS[0]], SamplingParams(max_tokens=9, stop_token_ids=(free[0],), ignore_eos=True))[0]
    assert forced.token_ids == free
    assert forced.finish_reason == "length"


def test_padded_batches_match_batch_one_greedy(tiny_hf_model):
    # Float32 with an attention mask: left padding changes nothing the argmax can see.
    single = TransformersEngine(tiny_hf_model, stop_token_ids=[STOP])
    padded = TransformersEngine(tiny_hf_model, stop_token_ids=[STOP], batching="padded", max_batch_size=3)
    params = SamplingParams(max_tokens=8)
    ref = single.generate(PROMPTS, params)
    got = padded.generate(PROMPTS, params)
    assert [o.token_ids for o in got] == [o.token_ids for o in ref]


def test_padded_batch_cuts_each_row_at_its_own_stop(tiny_hf_model):
    single = TransformersEngine(tiny_hf_model, stop_token_ids=[STOP])
    free = single.generate(PROMPTS, SamplingParams(max_tokens=8))
    stop = free[2].token_ids[2]  # row 2 stops early; the others likely run on
    stopped = TransformersEngine(tiny_hf_model, stop_token_ids=[stop], batching="padded").generate(
        PROMPTS, SamplingParams(max_tokens=8))
    for ref, out in zip(free, stopped):
        row = ref.token_ids
        expect = row[: row.index(stop)] if stop in row else row
        assert out.token_ids == expect
        assert out.finish_reason == ("stop" if stop in row else "length")


def test_sampling_settings_reach_generate(tiny_hf_model):
    engine = TransformersEngine(tiny_hf_model, stop_token_ids=[STOP])
    greedy = engine.generate([PROMPTS[2]], SamplingParams(max_tokens=8))[0].token_ids
    # top_k=1 sampling is greedy whatever the temperature: proves top_k is passed through.
    top1 = engine.generate([PROMPTS[2]], SamplingParams(max_tokens=8, temperature=1.5, top_k=1, seed=1))[0]
    assert top1.token_ids == greedy
    a = engine.generate([PROMPTS[2]], SamplingParams(max_tokens=8, temperature=2.0, seed=7))[0].token_ids
    b = engine.generate([PROMPTS[2]], SamplingParams(max_tokens=8, temperature=2.0, seed=7))[0].token_ids
    assert a == b
    penalized = engine.generate([PROMPTS[2]], SamplingParams(max_tokens=8, repetition_penalty=1.5))[0]
    ids = torch.tensor([PROMPTS[2]])
    direct = tiny_hf_model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=8,
                                    do_sample=False, eos_token_id=[STOP], pad_token_id=0, repetition_penalty=1.5,
                                    temperature=1.0, top_k=50, top_p=1.0)
    assert penalized.token_ids == direct[0, ids.shape[1]:].tolist()


def test_abort_drops_queued_requests(tiny_hf_model):
    engine = TransformersEngine(tiny_hf_model, stop_token_ids=[STOP])
    keep = engine.add_request(PROMPTS[0], SamplingParams(max_tokens=3))
    drop = engine.add_request(PROMPTS[1], SamplingParams(max_tokens=3), request_id="mine")
    assert drop == "mine" and engine.has_unfinished()
    engine.abort(drop)
    engine.abort("unknown-id")
    outs = engine.step()
    assert [o.request_id for o in outs] == [keep]
    assert not engine.has_unfinished()
    assert engine.stats().generated_tokens_total == 3
    assert engine.stats().generation_steps_total == 3


def test_bad_input_names_the_field(tiny_hf_model):
    with pytest.raises(InvalidInputError, match="batching") as err:
        TransformersEngine(tiny_hf_model, batching="dynamic")
    assert err.value.field == "batching"
    engine = TransformersEngine(tiny_hf_model, stop_token_ids=[STOP])
    with pytest.raises(InvalidInputError) as err:
        engine.add_request([], SamplingParams())
    assert err.value.field == "prompt_token_ids"


def saved_checkpoint(path, eos_token_ids, pad_token_id) -> Checkpoint:
    """A Checkpoint over a directory HF saved (the engine reads its path, stop and pad ids)."""
    generation = {"eos_token_id": list(eos_token_ids), "pad_token_id": pad_token_id}
    tokenizer = Tokenizer(WordLevel({"<unk>": 0}, unk_token="<unk>"))
    return Checkpoint(path=path, config={}, generation_config=generation, tokenizer=tokenizer)


def test_builds_the_model_from_a_checkpoint_directory(tiny_hf_model, tmp_path):
    tiny_hf_model.save_pretrained(tmp_path)
    engine = TransformersEngine(saved_checkpoint(tmp_path, (STOP, 299), 7), device="cpu", dtype="float32")
    assert engine.stop_token_ids == (STOP, 299) and engine.pad_token_id == 7
    assert engine.model.dtype == torch.float32 and engine.device.type == "cpu"
    out = engine.generate([PROMPTS[3]], SamplingParams(max_tokens=6))[0]
    assert out.token_ids == direct_greedy(tiny_hf_model, PROMPTS[3], 6, [STOP, 299])


def test_unusable_model_argument_and_dtype_are_clear_errors(tmp_path):
    with pytest.raises(InvalidInputError) as err:
        TransformersEngine(42)
    assert err.value.field == "model"
    with pytest.raises(InvalidInputError) as err:
        TransformersEngine(saved_checkpoint(tmp_path, (), None), dtype="int3")
    assert err.value.field == "dtype"
