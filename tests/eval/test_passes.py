"""Pass helpers: one line per output, requests counted from the segments."""
from __future__ import annotations

from hymt.eval.passes import PassStats, engine_requests, one_line
from hymt.languages import get_language
from hymt.translate.result import Segment, TranslationResult


def test_outputs_stay_on_one_line():
    assert one_line(" 第一行\n第二行\r\n第三\u2028行 ") == "第一行 第二行 第三 行"


def test_requests_count_translated_segments_and_retries():
    segments = (Segment("A.", "甲。", " "), Segment("B.", "乙。", " ", retried=True),
                Segment("", "", "\n", translatable=False), Segment("C.", "丙。", cached=True))
    result = TranslationResult("甲。 乙。", get_language("en"), get_language("zh"), segments)
    assert engine_requests(result) == 3


def test_stats_add_up():
    a = PassStats(2, 3, 10, 40, 2.0, 1, 0, {"echo": 1})
    b = PassStats(2, 2, 10, 20, 1.0, 1, 1, {"echo": 1, "length": 1})
    total = a.plus(b)
    assert (total.requests, total.completion_tokens, total.issues) == (5, 60, {"echo": 2, "length": 1})
    assert total.tokens_per_s == 20.0 and PassStats().tokens_per_s is None
