"""The quality retry switch (`retry=`) and ignore_eos answers, counted at the engine.

The native engine on the tiny random checkpoint answers noise that never stops within a few
tokens, so a small max_tokens forces a "length" finish: the quality guard flags it, which is
what `hymt bench --server` runs into. Requests are counted where they enter the engine.
"""
from __future__ import annotations

import asyncio

import pytest

from hymt.engine.sampling import SamplingParams
from hymt.errors import InvalidInputError
from hymt.languages import get_language
from hymt.translate.quality import QualityIssue, check_translation

TEXT = "Good morning, how are you today?"
CUT = SamplingParams(max_tokens=4)  # stops are honoured: the noise is cut at 4 tokens
FORCED = SamplingParams(max_tokens=4, ignore_eos=True)  # 4 tokens asked for
ECHO, LENGTH, REPETITION = QualityIssue.ECHO, QualityIssue.LENGTH, QualityIssue.REPETITION
WRONG_LANGUAGE = QualityIssue.WRONG_LANGUAGE


class CountingNative:
    """A Translator over the native engine whose add_request calls are recorded."""

    def __init__(self, tiny_dir, tiny_checkpoint) -> None:
        from hymt.engine.factory import create_engine
        from hymt.translate import Translator

        engine = create_engine("native", tiny_checkpoint, device="cpu")
        self.requests: list[tuple[list[int], SamplingParams]] = []
        add_request = engine.add_request

        def counted(prompt_token_ids, params, request_id=None, *, final_only=False):
            self.requests.append((list(prompt_token_ids), params))
            return add_request(prompt_token_ids, params, request_id, final_only=final_only)

        engine.add_request = counted
        self.translator = Translator(str(tiny_dir), engine=engine, cache=False)

    def take(self) -> list[tuple[list[int], SamplingParams]]:
        taken, self.requests = self.requests, []
        return taken


@pytest.fixture(scope="module")
def native(tiny_dir, tiny_checkpoint):
    counting = CountingNative(tiny_dir, tiny_checkpoint)
    yield counting
    counting.translator.close()


def test_flagged_segment_gets_a_second_request_by_default(native):
    native.take()
    result = native.translator.translate(TEXT, to="de", source="en", sampling=CUT)
    requests = native.take()
    assert len(requests) == 2 and requests[0][0] == requests[1][0]  # the same prompt, again
    # a cut answer is continued, not resampled: the same decoding with twice the budget
    assert requests[1][1].temperature == 0 and requests[1][1].max_tokens == 2 * requests[0][1].max_tokens == 8
    assert result.retried and result.segments[0].retry_reasons == (LENGTH,)
    assert result.prompt_tokens == 2 * len(requests[0][0])
    assert result.completion_tokens == 4 + 8


def test_retry_false_sends_exactly_one_request_and_still_reports_issues(native):
    native.take()
    result = native.translator.translate(TEXT, to="de", source="en", sampling=CUT, retry=False)
    requests = native.take()
    assert len(requests) == 1
    assert not result.retried and result.segments[0].retry_reasons == ()
    assert LENGTH in result.issues and LENGTH in result.segments[0].issues
    assert result.prompt_tokens == len(requests[0][0]) and result.completion_tokens == 4


def test_retry_false_holds_for_batches_documents_and_async(native):
    texts = [f"Sentence number {i} is about the weather." for i in range(3)]
    native.take()
    batch = native.translator.translate_batch(texts, to="de", source="en", sampling=CUT, retry=False)
    assert len(native.take()) == 3 and all(LENGTH in r.issues and not r.retried for r in batch)

    document = "\n\n".join(texts)
    done = []
    doc = native.translator.translate_document(document, to="de", source="en", sampling=CUT, retry=False,
                                               progress=lambda n, total: done.append((n, total)))
    segments = [s for s in doc.segments if s.translatable]
    assert len(native.take()) == len(segments) == 3 and not doc.retried and done[-1] == (3, 3)

    result = asyncio.run(native.translator.atranslate(TEXT, to="de", source="en", sampling=CUT, retry=False))
    assert len(native.take()) == 1 and not result.retried and LENGTH in result.issues
    results = asyncio.run(native.translator.atranslate_batch(texts, to="de", source="en", sampling=CUT,
                                                             retry=False))
    assert len(native.take()) == 3 and not any(r.retried for r in results)


def test_ignore_eos_length_finish_is_not_truncation(native):
    native.take()
    result = native.translator.translate(TEXT, to="de", source="en", sampling=FORCED, retry=False)
    assert len(native.take()) == 1
    assert result.completion_tokens == 4  # ran to max_tokens: the engine finished on "length"
    assert LENGTH not in result.issues
    # Without ignore_eos the same cut answer is a truncation.
    cut = native.translator.translate(TEXT, to="de", source="en", sampling=CUT, retry=False)
    assert cut.text == result.text and LENGTH in cut.issues


def test_ignore_eos_keeps_the_other_checks():
    de, en = get_language("de"), get_language("en")
    loop = "la la la la la la la la la la la la"
    assert check_translation("Sing.", loop, target=de, source_lang=en, finish_reason="length", ignore_eos=True) == (
        REPETITION,
    )
    echo = "Good morning, my friend."
    assert check_translation(echo, echo, target=de, source_lang=en, finish_reason="length", ignore_eos=True) == (
        ECHO,
    )
    assert check_translation(echo, echo, target=de, source_lang=en, finish_reason="length") == (ECHO, LENGTH)


def test_retry_false_with_a_scripted_echo(make_translator):
    # echoes every source: flagged "echo", and the detector sees English where German was asked
    translator, engine = make_translator(cache=True)
    first = translator.translate("Good morning, my friend.", to="de", source="en", retry=False)
    assert len(engine.prompts) == 1 and first.issues == (ECHO, WRONG_LANGUAGE) and not first.retried
    again = translator.translate("Good morning, my friend.", to="de", source="en", retry=False)
    assert not again.cached and len(engine.prompts) == 2  # answers with issues are not cached
    retried = translator.translate("Good morning, my friend.", to="de", source="en")
    assert retried.retried and len(engine.prompts) == 4


def test_stream_accepts_retry(make_translator):
    translator, engine = make_translator()
    stream = translator.stream("Good morning, my friend.", to="de", source="en", retry=False)
    assert "".join(stream) == "Good morning, my friend."
    assert stream.result.issues == (ECHO, WRONG_LANGUAGE) and len(engine.prompts) == 1


@pytest.mark.parametrize("value", ["no", 0, None])
def test_retry_must_be_a_bool(make_translator, value):
    translator, engine = make_translator()
    with pytest.raises(InvalidInputError) as err:
        translator.translate("Hello there.", to="de", source="en", retry=value)
    assert err.value.field == "retry" and "True or False" in str(err.value)
    assert engine.prompts == []
