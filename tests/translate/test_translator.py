"""Translator end to end with a scripted stand-in engine on a tiny checkpoint."""
from __future__ import annotations

import asyncio
import json

import pytest
from translate_samples import HTML, MARKDOWN, SAMPLES, SRT

from hymt.engine.sampling import SamplingParams
from hymt.errors import InvalidInputError, UnknownLanguageError, UnsupportedTemplateError
from hymt.testing import source_of
from hymt.translate.result import TranslationResult

ROUNDTRIPS = [
    (SAMPLES["english"], "en", "text"),
    (SAMPLES["chinese"], "zh", "text"),
    (SAMPLES["japanese"], "ja", "text"),
    (SAMPLES["thai"], "th", "text"),
    (MARKDOWN, "en", "markdown"),
    (SRT, "en", "srt"),
    (HTML, "en", "html"),
]


@pytest.mark.parametrize("text,lang,fmt", ROUNDTRIPS)
def test_identity_roundtrip_through_translator(make_translator, text, lang, fmt):
    translator, engine = make_translator()
    result = translator.translate(text, to=lang, source=lang, format=fmt)
    assert result.text == text
    assert result.issues == () and not result.retried and not result.cached
    translated = [s for s in result.segments if s.translatable]
    assert len(engine.prompts) == len({s.source for s in translated})  # duplicates share a request
    assert result.prompt_tokens > 0 and result.completion_tokens > 0


def test_split_sentences_false_sends_each_paragraph_whole(make_translator):
    text = "The first sentence. The second one? The third!\n\nA second paragraph. With two."
    translator, engine = make_translator()
    split = translator.translate(text, to="en", source="en")
    assert len(engine.prompts) == 5 and split.text == text
    translator, engine = make_translator()
    whole = translator.translate(text, to="en", source="en", split_sentences=False)
    assert [s.source for s in whole.segments if s.translatable] == [
        "The first sentence. The second one? The third!", "A second paragraph. With two."]
    assert len(engine.prompts) == 2 and whole.text == text


def test_long_text_is_split_and_nothing_dropped(make_translator):
    translator, engine = make_translator(max_segment_tokens=24)
    text = "A long clause that keeps going, " * 30 + "and finally ends."
    result = translator.translate(text, to="en", source="en")
    assert result.text == text
    assert len(result.segments) > 5
    assert all(len(translator.checkpoint.encode(s.source)) <= 24 for s in result.segments)


def test_batch_keeps_order(make_translator):
    translator, engine = make_translator(answer=lambda user, p: source_of(user).upper())
    texts = [f"sentence number {i} is here." for i in range(12)]
    results = translator.translate_batch(texts, to="en", source="en")
    assert [r.text for r in results] == [t.upper() for t in texts]
    assert len(engine.prompts) == 12
    assert translator.translate_batch([], to="en") == []


def test_cache_hit_and_bypass(make_translator):
    translator, engine = make_translator(answer=lambda user, p: "Hallo Welt, wie geht es?", cache=True)
    first = translator.translate("Hello world, how are you?", to="de", source="en")
    assert not first.cached and len(engine.prompts) == 1
    second = translator.translate("Hello world, how are you?", to="de", source="en")
    assert second.cached and second.text == first.text and len(engine.prompts) == 1
    assert second.segments[0].cached and second.prompt_tokens == 0
    bypass = translator.translate("Hello world, how are you?", to="de", source="en", use_cache=False)
    assert not bypass.cached and len(engine.prompts) == 2
    other_target = translator.translate("Hello world, how are you?", to="fr", source="en")
    assert not other_target.cached and len(engine.prompts) == 3
    sampled = translator.translate("Hello world, how are you?", to="de", source="en", sampling="official")
    again = translator.translate("Hello world, how are you?", to="de", source="en", sampling="official")
    assert not sampled.cached and not again.cached  # only greedy answers are cached


def test_quality_guard_retries_once_with_sampling(make_translator):
    def answer(user, params: SamplingParams):
        return source_of(user) if params.greedy else "Guten Morgen, mein Freund."

    translator, engine = make_translator(answer=answer)
    result = translator.translate("Good morning, my friend.", to="de", source="en")
    assert result.text == "Guten Morgen, mein Freund."
    assert result.retried and result.issues == ()
    assert result.segments[0].retry_reasons == ("echo", "wrong_language")
    assert len(engine.prompts) == 2
    retry_params = engine.prompts[1][1]
    assert retry_params.temperature == 0.7 and retry_params.seed is not None


def test_retry_that_does_not_help_keeps_issue(make_translator):
    translator, engine = make_translator()  # always echoes
    result = translator.translate("Good morning, my friend.", to="de", source="en")
    assert result.retried and result.issues == ("echo", "wrong_language")
    assert result.text == "Good morning, my friend."


def test_cleanup_applied(make_translator):
    translator, _ = make_translator(answer=lambda u, p: "<think>hmm</think> <target>Hallo.</target><|eos|>")
    assert translator.translate("Hello there.", to="de", source="en").text == "Hallo."


def test_stream_joins_to_translate(make_translator):
    translator, engine = make_translator()
    text = SAMPLES["chinese"] + "\n\n" + "价格是３．５元，包括税费和服务费。" * 3
    pieces = list(translator.stream(text, to="zh", source="zh"))
    assert len(pieces) > len([s for s in translator.translate(text, to="zh", source="zh").segments])
    assert "".join(pieces) == translator.translate(text, to="zh", source="zh").text == text
    assert all("\ufffd" not in p for p in pieces)


def test_glossary_context_and_prompts(make_translator):
    translator, engine = make_translator(answer=lambda u, p: "Die Katze schläft.")
    translator.translate("The cat sleeps. The dog barks.", to="de", source="en", glossary={"cat": "Katze"},
                         context="A story about pets.")
    users = [u for u, _ in engine.prompts]
    assert any("cat 翻译成 Katze" in u and "The cat sleeps." in u for u in users)
    assert any(u.startswith("A story about pets.\n") and "The dog barks." in u for u in users)
    assert all(p.with_stop_ids(translator._model.stop_token_ids) == p for _, p in engine.prompts)


def test_async_twins(make_translator):
    translator, _ = make_translator(answer=lambda u, p: "Bonjour tout le monde.")

    async def main():
        one = await translator.atranslate("Hello everyone out there.", to="fr", source="en")
        many = await translator.atranslate_batch(["Hello everyone.", "Hi all of you."], to="fr", source="en")
        items = [p async for p in translator.astream("Hello everyone out there.", to="fr", source="en")]
        return one, many, items

    one, many, items = asyncio.run(main())
    assert one.text == "Bonjour tout le monde." and len(many) == 2
    *pieces, last = items
    assert all(isinstance(p, str) for p in pieces) and "".join(pieces) == one.text
    assert isinstance(last, TranslationResult) and last.text == one.text
    assert (last.prompt_tokens, last.completion_tokens) == (one.prompt_tokens, one.completion_tokens)


def test_progress_callback(make_translator):
    translator, _ = make_translator()
    seen = []
    translator.translate_document("One sentence here. Two sentences here.\n\nThree here.", to="en",
                                  source="en", progress=lambda done, total: seen.append((done, total)))
    assert seen[0] == (0, 3) and seen[-1] == (3, 3)


def test_detection_when_source_is_auto(make_translator):
    translator, _ = make_translator(answer=lambda u, p: "Hello, how are you today?")
    result = translator.translate("今天天气真好，我们去公园吧。", to="en")
    assert result.source.code == "zh" and result.detection.confidence > 0.5
    assert translator.detect("오늘 날씨가 좋네요").language.code == "ko"


def test_bad_inputs(make_translator):
    translator, _ = make_translator()
    for empty in ("", "   \n"):
        with pytest.raises(InvalidInputError) as err:
            translator.translate(empty, to="de")
        assert err.value.field == "text"
    with pytest.raises(UnknownLanguageError) as err:
        translator.translate("Hello", to="xx")
    assert err.value.field == "to" and "de" in str(err.value)
    with pytest.raises(UnknownLanguageError) as err:
        translator.translate("Hello", to="de", source="sv")
    assert err.value.field == "source"
    with pytest.raises(UnsupportedTemplateError):
        translator.translate("Hello", to="de", template="style")
    with pytest.raises(InvalidInputError) as err:
        translator.translate("Hello", to="de", format="docx")
    assert "markdown" in str(err.value)
    with pytest.raises(InvalidInputError) as err:
        translator.translate_batch("not a list", to="de")
    assert err.value.field == "texts"


def test_info_stats_and_json(make_translator):
    translator, _ = make_translator(answer=lambda u, p: "Hallo, wie geht es dir?")
    assert translator.info.family == "HY-MT1.5-1.8B" and translator.info.engine == "ScriptedEngine"
    result = translator.translate("Hello, how are you?", to="de", source="en")
    data = json.loads(json.dumps(result.to_dict()))
    assert data["text"] == "Hallo, wie geht es dir?" and data["target"] == "de"
    assert data["segments"][0]["source"] == "Hello, how are you?"
    assert translator.stats() is not None


def test_no_text_is_tokenized_twice_while_planning(make_translator, monkeypatch):
    """The segmenter, the cache key and the official sampling's length rule all need a
    segment's token count: one count serves them (per translate call)."""
    from collections import Counter

    from hymt.checkpoint import Checkpoint

    encoded = Counter()
    original = Checkpoint.encode_text

    def spy(self, text):
        encoded[text] += 1
        return original(self, text)

    monkeypatch.setattr(Checkpoint, "encode_text", spy)
    translator, engine = make_translator(answer=lambda user, p: "Hallo.", cache=True)
    long_text = " ".join(f"Sentence number {i} is here, and it goes on for a while." for i in range(60))
    translator.translate(long_text, to="de", source="en")
    assert len(engine.prompts) > 1  # several segments were planned
    planned = Counter({text: n for text, n in encoded.items() if text in long_text})  # not prompts, not answers
    assert planned and max(planned.values()) == 1, planned.most_common(3)
