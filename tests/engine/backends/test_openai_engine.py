"""OpenAIEngine against a fake OpenAI-compatible server on loopback."""
from __future__ import annotations

import pytest

from hymt.engine.backends.openai_engine import OpenAIEngine
from hymt.engine.sampling import SamplingParams
from hymt.errors import EngineError, InvalidInputError

from .fake_openai_server import FakeOpenAIServer, fake_tokens


class CharTokenizer:
    """One token per character: id = ord(c)."""

    eos_token_ids = (90,)  # "Z"

    def encode(self, text):
        return [ord(c) for c in text]

    def decode(self, ids, skip_special_tokens=True):
        return "".join(chr(i) for i in ids)


def run_steps(engine, limit=400):
    outs = {}
    for _ in range(limit):
        if not engine.has_unfinished():
            break
        for out in engine.step():
            outs[out.request_id] = out
    return outs


@pytest.mark.parametrize("mode", ["token_ids", "logprobs", "text"])
def test_token_ids_come_back_in_every_server_mode(mode):
    with FakeOpenAIServer(mode) as server:
        engine = OpenAIEngine(server.url, tokenizer=CharTokenizer(), stop_token_ids=[])
        try:
            prompts = [[1, 2, 3], [5] * 7]
            outs = engine.generate(prompts, SamplingParams(max_tokens=6))
        finally:
            engine.close()
    assert engine.model == "fake-model"
    for prompt, out in zip(prompts, outs):
        assert out.token_ids == fake_tokens(prompt, 6)
        assert out.finish_reason == "length" and out.finished
        assert out.text == "".join(chr(t) for t in out.token_ids)


def test_request_body_carries_sampling_and_vllm_extras():
    with FakeOpenAIServer() as server:
        engine = OpenAIEngine(server.url + "/v1", model="m", api_key="sekrit", stop_token_ids=[7])
        try:
            engine.generate([[1, 2]], SamplingParams(temperature=0.7, top_k=20, top_p=0.6, repetition_penalty=1.05,
                                                     max_tokens=4, seed=11, stop_token_ids=(9,)))
            engine.generate([[1, 2]], SamplingParams(max_tokens=3, ignore_eos=True))
        finally:
            engine.close()
    first, second = server.bodies
    assert first["prompt"] == [1, 2] and first["model"] == "m" and first["_auth"] == "Bearer sekrit"
    assert (first["temperature"], first["top_k"], first["top_p"]) == (0.7, 20, 0.6)
    assert first["repetition_penalty"] == 1.05 and first["seed"] == 11 and first["max_tokens"] == 4
    assert first["stop_token_ids"] == [9, 7] and first["ignore_eos"] is False
    assert second["ignore_eos"] is True and second["stop_token_ids"] == [] and second["top_k"] == -1


def test_stop_token_is_removed_and_reason_is_stop():
    prompt = [1, 2, 3]
    expected = fake_tokens(prompt, 8)
    stop = expected[3]
    with FakeOpenAIServer() as server:
        engine = OpenAIEngine(server.url, stop_token_ids=[stop])
        try:
            out = engine.generate([prompt], SamplingParams(max_tokens=8))[0]
        finally:
            engine.close()
    assert out.token_ids == expected[: expected.index(stop)]
    assert out.finish_reason == "stop"


def test_text_prompt_format_sends_detokenized_prompt():
    with FakeOpenAIServer("text") as server:
        engine = OpenAIEngine(server.url, tokenizer=CharTokenizer(), prompt_format="text")
        try:
            out = engine.generate([[72, 105]], SamplingParams(max_tokens=5))[0]
        finally:
            engine.close()
    assert server.bodies[0]["prompt"] == "Hi"
    expected = fake_tokens([72, 105], 5)
    # The tokenizer's eos ("Z", 90) is the default stop id.
    assert out.token_ids == (expected[: expected.index(90)] if 90 in expected else expected)


def test_step_returns_finished_requests_while_others_run():
    with FakeOpenAIServer() as server:
        engine = OpenAIEngine(server.url, max_concurrency=4)
        try:
            slow = engine.add_request([FakeOpenAIServer.BLOCK_MARKER, 1], SamplingParams(max_tokens=2))
            fast = engine.add_request([1, 2], SamplingParams(max_tokens=2))
            seen = []
            for _ in range(400):
                seen += [o.request_id for o in engine.step()]
                if fast in seen:
                    break
            assert seen == [fast] and engine.has_unfinished() and engine.stats().num_running == 1
            server.release.set()
            assert list(run_steps(engine)) == [slow]
        finally:
            engine.close()


def test_server_error_becomes_engine_error_with_its_message():
    with FakeOpenAIServer() as server:
        engine = OpenAIEngine(server.url)
        try:
            ok = engine.add_request([1], SamplingParams(max_tokens=2))
            bad = engine.add_request([666], SamplingParams(max_tokens=2))
            outs = {}
            for _ in range(400):
                if not engine.has_unfinished():
                    break
                outs.update({o.request_id: o for o in engine.step()})
        finally:
            engine.close()
    assert sorted(outs) == sorted([ok, bad]) and outs[ok].error is None
    error = outs[bad].error  # the refused request finishes alone, with the server's message
    assert outs[bad].finished and isinstance(error, EngineError)
    assert "400" in str(error) and "prompt rejected: boom" in str(error)


def test_unreachable_server_and_bad_options():
    with FakeOpenAIServer() as server:
        url = server.url
    with pytest.raises(EngineError, match="cannot reach"):
        OpenAIEngine(url, timeout_s=2)
    with pytest.raises(InvalidInputError) as err:
        OpenAIEngine(url, model="m", prompt_format="chat")
    assert err.value.field == "prompt_format"
    with pytest.raises(InvalidInputError) as err:
        OpenAIEngine(url, model="m", prompt_format="text")
    assert err.value.field == "tokenizer"


def test_text_only_server_without_tokenizer_is_a_clear_error():
    with FakeOpenAIServer("text") as server:
        engine = OpenAIEngine(server.url)
        try:
            with pytest.raises(EngineError, match="tokenizer="):
                engine.generate([[1, 2]], SamplingParams(max_tokens=2))
        finally:
            engine.close()


def test_abort_drops_a_request_in_flight():
    with FakeOpenAIServer() as server:
        engine = OpenAIEngine(server.url)
        try:
            slow = engine.add_request([FakeOpenAIServer.BLOCK_MARKER, 2], SamplingParams(max_tokens=2))
            keep = engine.add_request([1, 2], SamplingParams(max_tokens=2))
            engine.abort(slow)
            server.release.set()
            assert list(run_steps(engine)) == [keep]
            assert engine.stats().num_running == 0
        finally:
            engine.close()
