"""Language detection: script heuristics and lingua within a script."""
from __future__ import annotations

import pytest

from hymt.translate.detect import LanguageDetector

SAMPLES = [
    ("今天天气真好，我们去公园散步吧。", "zh"),
    ("今天天氣真好，我們去公園散步吧。", "zh-Hant"),
    ("我哋今日去咗公園玩。", "yue"),
    ("今日はとても良い天気ですね。", "ja"),
    ("오늘 날씨가 정말 좋네요.", "ko"),
    ("วันนี้อากาศดีมาก", "th"),
    ("שלום, מה שלומך היום?", "he"),
    ("ئۇيغۇرچە يېزىق ناھايىتى چىرايلىق", "ug"),
    ("The weather is really nice today, let's go for a walk.", "en"),
    ("Das Wetter ist heute wirklich schön, lass uns spazieren gehen.", "de"),
    ("Il fait vraiment beau aujourd'hui, allons nous promener.", "fr"),
    ("Hoy hace muy buen tiempo, vamos a dar un paseo por el parque.", "es"),
    ("Сегодня очень хорошая погода, давай пойдём гулять.", "ru"),
    ("Сьогодні дуже гарна погода, ходімо гуляти.", "uk"),
    ("الطقس جميل جدا اليوم، دعنا نذهب في نزهة.", "ar"),
    ("आज मौसम बहुत अच्छा है, चलो टहलने चलते हैं।", "hi"),
]


@pytest.fixture(scope="module")
def detector():
    return LanguageDetector()


@pytest.mark.parametrize("text,code", SAMPLES)
def test_clear_samples(detector, text, code):
    found = detector.detect(text)
    assert found.language is not None and found.language.code == code
    assert 0.0 < found.confidence <= 1.0


def test_no_letters(detector):
    found = detector.detect("1234 — 56 !!")
    assert found.language is None and found.confidence == 0.0


def test_japanese_with_latin_words(detector):
    assert detector.detect("iPhoneを買いました").language.code == "ja"
