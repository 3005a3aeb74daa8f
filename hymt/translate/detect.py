"""Source-language detection: script heuristics first, then lingua within the script.

Scripts that name one language decide it (Hangul -> ko, kana -> ja, Thai, Khmer, Myanmar,
Tibetan, Hebrew, Gujarati, Telugu, Tamil, Bengali). Han without kana is Chinese: Cantonese
when Cantonese-only characters appear, Traditional Chinese when traditional-only characters
outnumber simplified-only ones. Latin, Cyrillic, Arabic and Devanagari text goes to a lingua
detector restricted to our languages in that script (built lazily, once per script: loading
only the models a script needs keeps memory and start-up small). Uyghur, which lingua does
not know, is recognised by its letters.
"""
from __future__ import annotations

import threading
from collections import Counter

from hymt.languages import get_language, script_counts
from hymt.translate.result import Detection

#: Text beyond this many characters does not change the answer, only the cost.
SAMPLE_CHARS = 2000

_SCRIPT_LANGUAGE = {
    "Hangul": "ko", "Thai": "th", "Khmer": "km", "Myanmar": "my", "Tibetan": "bo", "Hebrew": "he",
    "Gujarati": "gu", "Telugu": "te", "Tamil": "ta", "Bengali": "bn", "Mongolian": "mn",
}
_LINGUA_GROUPS = {
    "Latin": ("en", "fr", "pt", "es", "tr", "it", "de", "vi", "ms", "id", "tl", "pl", "cs", "nl"),
    "Cyrillic": ("ru", "uk", "kk", "mn"),
    "Arabic": ("ar", "fa", "ur"),
    "Devanagari": ("hi", "mr"),
}
# Characters only Cantonese writing uses, and characters only one Chinese standard uses.
_CANTONESE = set("嘅咗冇啲喺佢哋嘢唔乜嚟嗰咁噉畀攞揾嘥睇俾咩")
# (traditional, simplified) pairs of frequent characters that differ between the standards.
_PAIRS = (
    "這这 個个 們们 來来 說说 會会 為为 國国 學学 時时 對对 開开 關关 與与 語语 書书 長长 門门 東东 車车 "
    "馬马 見见 電电 話话 認认 識识 讓让 覺觉 點点 體体 頭头 邊边 還还 麼么 經经 過过 發发 現现 實实 問问 "
    "題题 應应 該该 當当 從从 間间 萬万 歲岁 誰谁 樣样 機机 氣气 業业 產产 務务 處处 員员 醫医 藥药 線线 "
    "總总 視视 頁页 網网 絡络 號号 碼码 區区 縣县 鄉乡 鎮镇 雲云 飛飞 鳥鸟 魚鱼 龍龙 風风 貓猫 義义 聽听 "
    "讀读 寫写 買买 賣卖 錢钱 銀银 鐵铁 錯错 辦办 歡欢 愛爱 筆笔 紙纸 計计 劃划 標标 準准 備备 習习 慣惯 "
    "環环 境境 變变 遠远 廣广 場场 灣湾 歷历 歸归 導导 師师 專专 齊齐 團团 圓圆 滿满 戰战 爭争 獨独 興兴 "
    "數数 據据 層层 驗验 證证 傳传 統统 營营 養养 農农 華华 夢梦 燈灯 廳厅 氣气 鐘钟 葉叶 際际 歷历"
).split()
_TRADITIONAL = {p[0] for p in _PAIRS if p[0] != p[1]}
_SIMPLIFIED = {p[1] for p in _PAIRS if p[0] != p[1]}
_UYGHUR = set("ېۆۈۋێە")


class LanguageDetector:
    """Thread-safe, lazily built detector; `detect(text) -> Detection`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lingua: dict[str, object] = {}

    def detect(self, text: str) -> Detection:
        sample = text[:SAMPLE_CHARS]
        counts = script_counts(sample)
        letters = sum(counts.values())
        if not letters:
            return Detection(None, 0.0)
        kana = counts["Hiragana"] + counts["Katakana"]
        if kana and (kana + counts["Han"]) / letters >= 0.2:
            return _found("ja", (kana + counts["Han"]) / letters)
        script, n = max(counts.items(), key=lambda kv: kv[1])
        share = n / letters
        if script == "Han":
            return self._chinese(sample, share)
        if script in _SCRIPT_LANGUAGE:
            return _found(_SCRIPT_LANGUAGE[script], share)
        if script == "Arabic" and sum(ch in _UYGHUR for ch in sample) >= 2:
            return _found("ug", share)
        if script in _LINGUA_GROUPS:
            return self._lingua_detect(script, sample, share)
        return Detection(None, 0.0)

    def _chinese(self, sample: str, share: float) -> Detection:
        chars = Counter(sample)
        if sum(chars[c] for c in _CANTONESE) >= 1:
            return _found("yue", share * 0.9)
        trad = sum(chars[c] for c in _TRADITIONAL)
        simp = sum(chars[c] for c in _SIMPLIFIED)
        if trad > simp:
            return _found("zh-Hant", share * trad / (trad + simp))
        if simp:
            return _found("zh", share * simp / (trad + simp))
        return _found("zh", share * 0.8)  # no telling characters: most Han text is simplified

    def _lingua_detect(self, script: str, sample: str, share: float) -> Detection:
        detector = self._detector(script)
        values = detector.compute_language_confidence_values(sample)
        if not values or values[0].value <= 0:
            return Detection(None, 0.0)
        top = values[0]
        return _found(top.language.iso_code_639_1.name.lower(), share * top.value)

    def _detector(self, script: str):
        with self._lock:
            if script not in self._lingua:
                from lingua import IsoCode639_1, Language, LanguageDetectorBuilder

                langs = [Language.from_iso_code_639_1(getattr(IsoCode639_1, c.upper())) for c in _LINGUA_GROUPS[script]]
                self._lingua[script] = LanguageDetectorBuilder.from_languages(*langs).build()
            return self._lingua[script]


def _found(code: str, confidence: float) -> Detection:
    return Detection(get_language(code), round(max(0.0, min(1.0, confidence)), 4))


_DEFAULT: LanguageDetector | None = None
_DEFAULT_LOCK = threading.Lock()


def detect_language(text: str) -> Detection:
    """Detect with the process-wide detector (its lingua models load on first use)."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None:
            _DEFAULT = LanguageDetector()
    return _DEFAULT.detect(text)
