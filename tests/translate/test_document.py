"""segment_document / reassemble: byte-for-byte round trips and what counts as a segment."""
from __future__ import annotations

import pytest
from translate_samples import HTML, MARKDOWN, SAMPLES, SRT

from hymt.errors import InvalidInputError
from hymt.translate import guess_format, is_translatable, reassemble, segment_document


def _roundtrip(text: str, fmt: str = "text", **kw) -> list:
    segments = segment_document(text, fmt, **kw)
    assert "".join(s.source + s.separator_after for s in segments) == text
    assert reassemble(segments) == text  # untranslated segments carry their source as text
    return segments


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_text_roundtrip(name):
    segments = _roundtrip(SAMPLES[name])
    for seg in segments:
        assert seg.source == seg.source.strip() or "\n" in seg.source


def test_english_abbreviations_and_decimals_do_not_split():
    sources = [s.source for s in _roundtrip(SAMPLES["english"]) if s.translatable]
    assert sources[0] == "Mr. Smith paid $3.14 for it on Jan. 5."
    assert sources[1] == "Dr. Who?"
    assert "He lives in the U.S. with Mrs. Jones!" in sources
    assert '"Yes," she said.' in sources
    assert "It costs 2.5 million, e.g. a lot." in sources
    assert "J. K. Rowling wrote it..." in sources
    assert "1. First item" in sources and "2) Second item" in sources


def test_chinese_sentences_and_closing_quotes():
    sources = [s.source for s in _roundtrip(SAMPLES["chinese"]) if s.translatable]
    assert sources[:3] == ["今天天气真好。", "我们去公园吧！", "“你来吗？”他问。"]
    assert sources[3] == "第二段：价格是3.5元（含税。）结束"


def test_japanese_quote_runs_on():
    sources = [s.source for s in _roundtrip(SAMPLES["japanese"])]
    assert sources == ["こんにちは。", "「元気ですか？」と彼は言った。", "今日はいい天気ですね！", "明日は雨でしょう。"]


def test_thai_spaces_and_short_pieces():
    sources = [s.source for s in _roundtrip(SAMPLES["thai"])]
    # the short trailing "ขอบคุณ" stays with its neighbour
    assert sources == ["สวัสดีครับวันนี้อากาศดีมาก", "ผมจะไปเที่ยวทะเลกับครอบครัว ขอบคุณ"]


def test_khmer_and_burmese_end_marks():
    sources = [s.source for s in _roundtrip(SAMPLES["khmer_burmese"])]
    assert sources == ["ខ្ញុំស្រលាញ់ប្រទេសកម្ពុជា។", "ថ្ងៃនេះអាកាសធាតុល្អ។", "မင်္ဂလာပါ။", "နေကောင်းလား။"]


def test_leading_whitespace_goes_to_an_empty_lead_segment():
    segments = _roundtrip(SAMPLES["mixed_whitespace"])
    assert segments[0].source == "" and not segments[0].translatable
    assert segments[0].separator_after == "\n\n  "


def test_markdown_keeps_markup_and_skips_code():
    segments = _roundtrip(MARKDOWN, "markdown")
    translated = [s.source for s in segments if s.translatable]
    assert translated[0] == "A heading"
    assert "Some text that\nwraps over two lines." in translated  # one unit across the wrap
    assert "item one" in translated and "task two\n  continued here" in translated
    assert "nested item" in translated
    assert "cell one" in translated and "Value" in translated
    assert "A quote." in translated and "Inline" in translated
    everything = " ".join(translated)
    for kept in ("print", "indented code", "Front matter", "example.com", "title"):
        assert kept not in everything
    separators = "".join(s.separator_after for s in segments)
    assert "# " in segments[0].separator_after and "- [ ] " in separators and "|:-----:|" in separators


def test_srt_cue_by_cue():
    segments = _roundtrip(SRT, "srt")
    translated = [s.source for s in segments if s.translatable]
    assert translated == ["Hello there.\nHow are you?", "- Fine. - Good.", "<i>Bye!</i>"]
    assert "00:00:03,000 --> 00:00:04,000" in segments[1].separator_after


def test_html_text_nodes_only():
    segments = _roundtrip(HTML, "html")
    translated = [s.source for s in segments if s.translatable]
    assert translated[0] == "Page title"
    assert "Hello" in translated and "world" in translated and "Last &amp; final." in translated
    assert not any("not text" in t or "keep" in t or "comment" in t or "color" in t for t in translated)


def test_long_sentence_split_to_budget_nothing_dropped():
    text = "This clause goes on, " * 60 + "and ends here."
    segments = _roundtrip(text, max_tokens=40)
    assert len(segments) > 5
    assert all(len(s.source.encode()) / 3 <= 40 for s in segments)


def test_unbroken_text_split_by_characters_with_a_real_counter():
    text = "字" * 500 + "。" + "x" * 300
    segments = _roundtrip(text, max_tokens=16, count_tokens=len)
    assert all(len(s.source) <= 16 for s in segments)
    assert len(segments) >= 50


def test_combining_marks_never_separated():
    text = "नमस्ते" * 80  # Devanagari: consonants with combining vowel signs and viramas
    segments = _roundtrip(text, max_tokens=10, count_tokens=len)
    assert all(s.source[0] not in "\u094d\u0947\u093e" for s in segments)


def test_passthrough_pieces():
    assert not is_translatable("1234 + 56 = 1290 !!")
    assert not is_translatable("https://example.com/a/b")
    assert not is_translatable("`pip install hymt`")
    assert not is_translatable("🙂 ✔")
    assert is_translatable("Hello 42")
    segments = _roundtrip("Intro text.\n\n12:30\n\n---\n", "text")
    assert [s.translatable for s in segments] == [True, False, False]


def test_bad_format_lists_valid_values():
    with pytest.raises(InvalidInputError) as err:
        segment_document("hi", "docx")
    assert err.value.field == "format"
    assert "markdown" in str(err.value) and "srt" in str(err.value)


def test_guess_format():
    assert [guess_format(n) for n in ("a.md", "b.SRT", "c.html", "d.txt", "e")] == [
        "markdown", "srt", "html", "text", "text",
    ]
