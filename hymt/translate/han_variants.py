"""Which language a text written in Han characters (and perhaps kana) is in: ja, yue, zh-Hant or zh.

Japanese: kana are not proof (Chinese writes brand names in katakana: "这款ソニー相机"), their
share is. Hiragana carries Japanese grammar, so it weighs most; characters that only Chinese
writes (这, 們, 吗, 是, 很, ...) weigh against. Kana without any Han character is Japanese.

Cantonese: one marker is not proof either (Mandarin writes 唔 for "hmm" and quotes Cantonese
words); the markers must add up to two and make 4 % of the Han characters, or make 10 % of a
short text ("佢係我朋友").

Traditional against Simplified: characters that exist in only one of the two standards, after
CC-CEDICT (`zhon.cedict`); a text with none (or as many of each) counts as Simplified, the more
common standard, with less certainty.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from zhon import cedict

# Characters frequent in Chinese and not written in Japanese (Japanese writes 説 not 說, 対 not 對).
_CHINESE_ONLY = frozenset("这這们們吗嗎呢吧你她没沒很也还還让讓给说說吃了是个么麼哪怎些啊呀跟对對欢歡")
# Cantonese markers: characters Mandarin does not write, worth 1; characters Mandarin writes
# now and then (唔 "hmm", 係 in 關係, 俾 literary), worth 0.5; and Cantonese words.
_CANTONESE_STRONG = frozenset("嘅咗冇啲喺哋嘢嚟嗰噉攞搵揾嘥佢冚嘞啱睇㗎喎噃")
_CANTONESE_WEAK = frozenset("唔咩乜咁係畀俾")
_CANTONESE_WORDS = (
    "唔該", "唔该", "唔好", "點解", "点解", "而家", "邊度", "边度", "係咪", "系咪", "鍾意", "钟意", "邊個", "边个",
)
_NOT_CANTONESE = ("關係", "关系", "聯係", "联系")
_TRADITIONAL_ONLY = frozenset(cedict.traditional) - frozenset(cedict.simplified)
_SIMPLIFIED_ONLY = frozenset(cedict.simplified) - frozenset(cedict.traditional)
# Evidence added to every denominator: one telling character is a hint, not a certainty.
_PRIOR = 1.0


@dataclass(frozen=True)
class HanGuess:
    """A language among ja, yue, zh-Hant and zh, and how sure (0-1) the evidence makes it."""

    code: str
    certainty: float

    def __post_init__(self) -> None:
        if self.code not in ("ja", "yue", "zh-Hant", "zh") or not 0.0 <= self.certainty <= 1.0:
            raise ValueError(f"bad Han guess {self.code!r} {self.certainty}")


def detect_han(sample: str, counts: Counter[str]) -> HanGuess:
    """The language of a text whose letters are mostly Han and kana (`counts`: letters per script)."""
    chars = Counter(sample)
    japanese = _japanese_evidence(chars, counts)
    if japanese is not None:
        return japanese
    han = max(counts["Han"], 1)
    cantonese = _cantonese_score(sample, chars)
    if (cantonese >= 2 and cantonese / han >= 0.04) or (cantonese >= 1 and cantonese / han >= 0.1):
        return HanGuess("yue", cantonese / (cantonese + _PRIOR))
    traditional = sum(n for c, n in chars.items() if c in _TRADITIONAL_ONLY)
    simplified = sum(n for c, n in chars.items() if c in _SIMPLIFIED_ONLY)
    if traditional > simplified:
        return HanGuess("zh-Hant", traditional / (traditional + simplified + _PRIOR))
    if simplified > traditional:
        return HanGuess("zh", simplified / (traditional + simplified + _PRIOR))
    return HanGuess("zh", 0.5)


def _japanese_evidence(chars: Counter[str], counts: Counter[str]) -> HanGuess | None:
    hiragana, katakana, han = counts["Hiragana"], counts["Katakana"], counts["Han"]
    kana = hiragana + katakana
    if not kana:
        return None
    if not han:
        return HanGuess("ja", kana / (kana + _PRIOR))
    japanese = hiragana + 0.25 * katakana  # katakana alone is often a loanword inside Chinese
    chinese = sum(chars[c] for c in _CHINESE_ONLY)
    if japanese > 2 * chinese and (hiragana or kana / (kana + han) >= 0.5):
        return HanGuess("ja", japanese / (japanese + chinese + _PRIOR))
    return None


def _cantonese_score(sample: str, chars: Counter[str]) -> float:
    score = sum(chars[c] for c in _CANTONESE_STRONG) + 0.5 * sum(chars[c] for c in _CANTONESE_WEAK)
    score += sum(sample.count(word) for word in _CANTONESE_WORDS)
    score -= 0.5 * sum(sample.count(word) for word in _NOT_CANTONESE)  # 係 there is standard Chinese
    return score
