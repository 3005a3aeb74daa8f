"""The quality guard's checks."""
from __future__ import annotations

import pytest

from hymt.languages import get_language
from hymt.translate.quality import check_translation, is_repetitive, wrong_script

EN, ZH, JA, RU, DE = (get_language(c) for c in ("en", "zh", "ja", "ru", "de"))


def test_good_translations_pass():
    assert check_translation("今天天气真好。", "The weather is nice today.", target=EN, source_lang=ZH) == ()
    assert check_translation("Hello, world.", "你好，世界。", target=ZH, source_lang=EN) == ()
    assert check_translation("Good morning.", "おはようございます。", target=JA) == ()
    assert check_translation("Good morning, my friend.", "Доброе утро, мой друг.", target=RU) == ()
    assert check_translation("iPhone", "iPhone", target=ZH, source_lang=EN) == ()  # too short to judge


def test_empty_and_echo():
    assert check_translation("Hello there.", "  ", target=DE) == ("empty",)
    assert check_translation("Hello there, friend.", "hello  there, friend.", target=DE, source_lang=EN) == ("echo",)
    assert check_translation("Hello there, friend.", "Hello there, friend.", target=EN, source_lang=EN) == ()
    assert check_translation("Coca Cola", "Coca Cola", target=DE, source_lang=EN) == ()  # a name
    assert "echo" in check_translation("今天天气好", "今天天气好", target=EN, source_lang=ZH)


def test_wrong_script():
    assert wrong_script("这是中文的句子，不是英文。", EN)
    assert wrong_script("Dies ist 中文中文中文中文 gemischt", DE)  # > 30 % Han
    assert not wrong_script("Das ist das Wort 中 im Satz.", DE)
    assert wrong_script("This is an English sentence instead.", ZH)
    assert wrong_script("这是中文的句子而不是日语的句子", JA)  # Han without kana for Japanese
    assert wrong_script("これは日本語の文です", ZH)  # kana for Chinese
    assert wrong_script("This is not Russian at all, sorry.", RU)
    assert not wrong_script("Это iPhone 15 Pro.", RU)


def test_repetition():
    assert is_repetitive("Hello.", "Bonjour bonjour bonjour bonjour bonjour bonjour")
    assert is_repetitive("Long text.", "我们走吧，我们走吧，我们走吧，我们走吧，我们走吧，我们走吧")
    assert not is_repetitive("ha ha ha ha ha ha", "ha ha ha ha ha ha")  # the source repeats too
    assert not is_repetitive("A normal sentence.", "Une phrase normale, sans boucle, qui se termine ici.")
    loop = " ".join(["the cat sat on", "the mat and", "the cat sat on", "the mat and"] * 6)
    assert "repetition" in check_translation("Die Katze.", loop, target=EN)


@pytest.mark.parametrize("output", [
    "Intro: abc abc  abc\tabc\nabc abc end",  # irregular whitespace between the repeats
    "x" * 3 + "lalalalalalalalalala" + "y",  # a 2-character unit
    "Start " + "a long repeated phrase of words, " * 5,  # a unit of 33 characters
    "前言" + "天天向上" * 5,
])
def test_loops_are_found_whatever_the_unit_and_the_spacing(output):
    assert is_repetitive("Short source.", output)


def test_unit_longer_than_the_limit_is_not_a_loop():
    unit = "an unusually long phrase that goes on past forty characters, "  # 61 characters
    assert not is_repetitive("Short source.", unit * 5)


def test_length_limit_is_an_issue():
    assert check_translation("Hi there.", "Salut là.", target=DE, finish_reason="length") == ("length",)
