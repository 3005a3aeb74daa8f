"""OpenAI Chat Completions and /v1/models, driven with the real `openai` package."""
from __future__ import annotations

import openai
import pytest

OFFICIAL_ZH = "将以下文本翻译为英语，注意只需要输出翻译后的结果，不要额外解释：\n\n今天天气很好。"
IMMERSIVE_SYSTEM = "You are a professional, authentic machine translation engine."


@pytest.fixture(scope="module")
def oai(hymt_server):
    with openai.OpenAI(base_url=f"{hymt_server.url}/v1", api_key="unused", max_retries=0, timeout=60) as client:
        yield client


def _chat(oai, messages, **kw):
    raw = oai.chat.completions.with_raw_response.create(model="hy-mt", messages=messages, max_tokens=6, **kw)
    return raw.parse(), raw.headers


def test_models_lists_the_served_model(oai):
    models = oai.models.list().data
    # the served id first, then the aliases a client may pick (the family's hub id)
    assert [m.id for m in models] == ["HY-MT1.5-1.8B", "tencent/HY-MT1.5-1.8B"] and models[0].object == "model"


def test_official_prompt_passes_through(oai):
    completion, headers = _chat(oai, [{"role": "user", "content": OFFICIAL_ZH}])
    assert headers["x-hymt-prompt-guard"] == "passthrough" and headers["x-hymt-prompt-kind"] == "official"
    choice = completion.choices[0]
    assert completion.object == "chat.completion" and choice.message.role == "assistant"
    assert isinstance(choice.message.content, str) and choice.finish_reason in ("stop", "length")
    usage = completion.usage
    assert usage.prompt_tokens > 0 and 1 <= usage.completion_tokens <= 6
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens


def test_content_as_list_of_parts(oai):
    completion, headers = _chat(oai, [{"role": "user", "content": [{"type": "text", "text": OFFICIAL_ZH}]}])
    assert headers["x-hymt-prompt-kind"] == "official" and completion.usage.completion_tokens >= 1


def test_generic_prompt_is_rewritten_per_paragraph(oai):
    text = "Translate the following text into German:\n\nThe first paragraph.\n\nThe second paragraph."
    completion, headers = _chat(oai, [{"role": "system", "content": IMMERSIVE_SYSTEM},
                                      {"role": "user", "content": text}])
    assert headers["x-hymt-prompt-guard"] == "rewritten" and headers["x-hymt-prompt-kind"] == "generic"
    answer = completion.choices[0].message.content
    assert "\n\n" in answer, "the paragraphs are translated separately and re-joined with their separator"
    assert completion.usage.completion_tokens >= 2  # one engine request per paragraph, each >= 1 token


def test_instruction_in_system_message_is_rewritten(oai):
    completion, headers = _chat(oai, [{"role": "system", "content": "Translate the user's text to French."},
                                      {"role": "user", "content": "Hello there.\n%%\nGood night."}])
    assert headers["x-hymt-prompt-guard"] == "rewritten"
    assert "\n%%\n" in completion.choices[0].message.content


def test_other_chats_pass_through_as_chat(oai):
    _, headers = _chat(oai, [{"role": "user", "content": "What is the capital of France?"}])
    assert headers["x-hymt-prompt-guard"] == "passthrough" and headers["x-hymt-prompt-kind"] == "chat"


def test_stream_with_usage(oai):
    stream = oai.chat.completions.create(model="hy-mt", messages=[{"role": "user", "content": OFFICIAL_ZH}],
                                         max_tokens=5, stream=True, stream_options={"include_usage": True})
    chunks = list(stream)
    assert chunks[0].choices[0].delta.role == "assistant"
    finals = [c for c in chunks if c.choices and c.choices[0].finish_reason]
    assert len(finals) == 1 and finals[0].choices[0].finish_reason in ("stop", "length")
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens >= 1
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert isinstance(text, str)
    assert all(c.object == "chat.completion.chunk" for c in chunks)


def test_stream_of_a_rewritten_prompt(oai):
    stream = oai.chat.completions.create(
        model="hy-mt", max_tokens=5, stream=True,
        messages=[{"role": "user", "content": "Translate into Japanese:\n\nOne.\n\nTwo."}])
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert "\n\n" in text


def test_errors_use_openai_shape(oai):
    with pytest.raises(openai.BadRequestError) as info:
        oai.chat.completions.create(model="hy-mt", messages=[{"role": "user", "content": "hi"}], n=2)
    assert info.value.body["type"] == "invalid_request_error" and info.value.body["param"] == "n"
    with pytest.raises(openai.BadRequestError) as info:
        oai.chat.completions.create(model="hy-mt", messages=[{"role": "wizard", "content": "hi"}])
    assert "role" in info.value.body["message"]
    with pytest.raises(openai.BadRequestError) as info:
        oai.chat.completions.create(model="hy-mt", messages=[], max_tokens=3)
    assert info.value.body["param"] == "messages"
    with pytest.raises(openai.BadRequestError) as info:
        oai.chat.completions.create(model="hy-mt", messages=[{"role": "user", "content": "hi"}], temperature=-1)
    assert "temperature" in info.value.body["message"]
