"""Streaming: text pieces in document order, then a TranslationResult with the token counts."""
from __future__ import annotations

import asyncio

import pytest
from translate_samples import SAMPLES

from hymt.engine.sampling import SamplingParams
from hymt.translate.result import TranslationResult

# Several segments, one of them twice (one request answers both), and pass-through pieces.
DOC = SAMPLES["chinese"] + "\n\n12345\n\n" + "价格是３．５元，包括税费和服务费。\n\n" * 2


def _counts(result: TranslationResult) -> tuple:
    return result.prompt_tokens, result.completion_tokens, [(s.prompt_tokens, s.completion_tokens)
                                                            for s in result.segments]


def test_stream_result_has_the_token_counts_of_translate(make_translator):
    translator, _ = make_translator()
    stream = translator.stream(DOC, to="zh", source="zh")
    assert stream.result is None
    pieces = list(stream)
    streamed = stream.result
    plain = translator.translate(DOC, to="zh", source="zh")
    assert not plain.retried and plain.issues == ()
    assert isinstance(streamed, TranslationResult) and all(isinstance(p, str) for p in pieces)
    assert "".join(pieces) == streamed.text == plain.text == DOC
    assert _counts(streamed) == _counts(plain)
    assert isinstance(streamed.prompt_tokens, int) and streamed.prompt_tokens > 0
    assert isinstance(streamed.completion_tokens, int) and streamed.completion_tokens > 0
    assert streamed.source.code == "zh" and streamed.target.code == "zh" and not streamed.cached


def test_astream_ends_with_the_same_result(make_translator):
    translator, _ = make_translator()

    async def main():
        items = [item async for item in translator.astream(DOC, to="zh")]
        return items, await translator.atranslate(DOC, to="zh")

    items, plain = asyncio.run(main())
    *pieces, last = items
    assert all(isinstance(p, str) for p in pieces) and isinstance(last, TranslationResult)
    assert "".join(pieces) == last.text == plain.text
    assert _counts(last) == _counts(plain) and last.completion_tokens > 0
    assert last.detection is not None and last.detection.language.code == "zh"  # source "auto"


def test_cached_segments_stream_with_zero_tokens(make_translator):
    translator, engine = make_translator(cache=True)
    first = translator.translate(DOC, to="zh", source="zh")
    asked = len(engine.prompts)
    stream = translator.stream(DOC, to="zh", source="zh")
    assert "".join(stream) == first.text
    assert len(engine.prompts) == asked  # nothing reached the engine
    assert stream.result.cached and (stream.result.prompt_tokens, stream.result.completion_tokens) == (0, 0)


def test_abandoned_stream_cancels_and_caches_what_finished(make_translator):
    translator, engine = make_translator(cache=True)
    text = "第一句话在这里。\n\n第二句话在那里。"
    with translator.stream(text, to="zh", source="zh") as stream:
        seen = ""
        while not seen.endswith("\n\n"):  # the first segment and its separator
            seen += next(stream)
    assert stream.result is None
    assert not engine.has_unfinished()  # the second request was cancelled
    again = translator.translate(text, to="zh", source="zh")
    assert [s.cached for s in again.segments if s.translatable] == [True, False]


def test_native_engine_counts_on_the_tiny_checkpoint(tiny_dir):
    from hymt.translate import Translator

    text = "Stream this sentence please."
    forced = SamplingParams(max_tokens=6, ignore_eos=True)  # greedy, exactly 6 tokens
    cut = SamplingParams(max_tokens=6)  # the random model never stops this early: cut off
    with Translator(str(tiny_dir), engine="native", device="cpu", cache=False) as translator:
        stream = translator.stream(text, to="de", source="en", sampling=forced)
        pieces = "".join(stream)
        plain = translator.translate(text, to="de", source="en", sampling=forced, retry=False)
        cut_stream = translator.stream(text, to="de", source="en", sampling=cut)
        cut_pieces = "".join(cut_stream)
        cut_plain = translator.translate(text, to="de", source="en", sampling=cut)
    streamed = stream.result
    assert streamed.text == pieces == plain.text and streamed.completion_tokens == plain.completion_tokens == 6
    # ignore_eos asked for the length: neither path calls it a truncation; one request each.
    assert "length" not in streamed.issues and "length" not in plain.issues
    assert not plain.retried and plain.prompt_tokens == streamed.prompt_tokens > 0
    # Cut at max_tokens: flagged; the stream never retries, translate retries once.
    assert cut_stream.result.text == cut_pieces and "length" in cut_stream.result.issues
    assert not cut_stream.result.retried
    assert cut_plain.retried and cut_plain.prompt_tokens == 2 * cut_stream.result.prompt_tokens > 0


@pytest.mark.parametrize("method", ["stream", "astream"])
def test_bad_input_fails_before_streaming(make_translator, method):
    from hymt.errors import InvalidInputError

    translator, engine = make_translator()
    with pytest.raises(InvalidInputError):
        if method == "stream":
            translator.stream("   ", to="de")
        else:
            asyncio.run(anext(translator.astream("   ", to="de")))
    assert engine.prompts == []
