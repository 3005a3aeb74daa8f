"""Source-language detection: the script first, then evidence within the script.

1. The script with the most weight decides the family (a Han character or kana counts for
   several Latin letters: "我用iPhone拍的照片" is Chinese, "iPhoneを買いました" Japanese).
   Scripts that only one of our languages uses decide it (Hangul, Thai, Khmer, Hebrew, ...);
   which languages use which script comes from `hymt.languages.LANGUAGES`.
2. Han and kana (`hymt.translate.han_variants`): Japanese by the share of kana, hiragana above
   all, against Chinese-only function characters; then Cantonese by the weight of its
   markers, Traditional against Simplified by the characters that differ between them.
3. Arabic script: Uyghur (which lingua does not know) and Arabic-script Kazakh by their
   letters, Urdu by its letters, then lingua between Arabic and Persian.
4. Devanagari: Hindi and Marathi function words (and ळ, -च्या, -मध्ये) decide; a short text
   without either favours Hindi; a longer one goes to lingua.
5. Latin and Cyrillic: lingua restricted to our languages of that script. A short Latin text
   (`SHORT_WORDS` words or fewer) needs strong evidence — a very common word of one language
   (`hymt.translate.common_words`) or lingua sure of itself — else the answer is "unknown"
   (language None): a confident wrong language is worse than none, since translation works
   without a source language.

Lingua detectors are built lazily, once per script (`preload` builds them all up front), and
use only lingua's offline models.
"""
from __future__ import annotations

import functools
import importlib.util
import logging
import re
import threading
from collections import Counter
from typing import TYPE_CHECKING

from hymt.languages import LANGUAGES, get_language, script_counts
from hymt.translate.common_words import (
    DEVANAGARI_WORD,
    DEVANAGARI_WORDS,
    LATIN_LETTERS,
    LATIN_WORD,
    LATIN_WORDS,
    leader,
    letter_vote,
    vote,
)
from hymt.translate.han_variants import detect_han
from hymt.translate.result import Detection

if TYPE_CHECKING:
    import lingua

logger = logging.getLogger(__name__)

#: Text beyond this many characters does not change the answer, only the cost.
SAMPLE_CHARS = 2000
#: Latin texts of at most this many words need strong evidence, else they are "unknown".
SHORT_WORDS = 6
#: Lingua's relative confidence (0-1) it must reach on a short Latin text, and its lead over
#: the runner-up: below either, lingua is guessing (it puts "Hello" in Italian at 0.28).
SHORT_MIN_CONFIDENCE = 0.4
SHORT_MIN_LEAD = 0.1
#: A short text on which lingua is this sure (letters only one language has) outranks the
#: common-word vote.
LINGUA_CERTAIN = 0.9

# Letters per character of each script: one Han character is a word or most of one, a kana or
# Hangul block a syllable; other scripts write about one sound per character.
_SCRIPT_WEIGHT = {"Han": 3.0, "Hiragana": 2.0, "Katakana": 2.0, "Hangul": 3.0}
_CJK = frozenset({"Han", "Hiragana", "Katakana"})

# Letters only Uyghur writes among our Arabic-script languages (ۇ ۆ ۈ ۋ ې ە), the high hamza
# only Arabic-script Kazakh writes, and the letters only Urdu writes (ٹ ڈ ڑ ں ھ ہ ۃ ے ۓ).
_UYGHUR_LETTERS = frozenset("\u06c7\u06c6\u06c8\u06cb\u06d0\u06d5")
_KAZAKH_HAMZA = "\u0674"
_URDU_LETTERS = frozenset("\u0679\u0688\u0691\u06ba\u06be\u06c1\u06c3\u06d2\u06d3")
# Marathi writes ळ and glues postpositions to the noun (-च्या "of", -मध्ये "in"); Hindi does neither.
_MARATHI_LETTER = "\u0933"
_MARATHI_ENDINGS = ("च्या", "मध्ये")
# Alef maksura (ى) ends Arabic words only; Uyghur writes it for the vowel i anywhere in a word.
_MEDIAL_ALEF_MAKSURA = re.compile("\u0649(?=[\u0620-\u064a\u066e-\u06d3\u06d5])")


def _languages_by_script() -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for lang in LANGUAGES:
        for script in lang.scripts:
            out.setdefault(script, []).append(lang.code)
    return {script: tuple(codes) for script, codes in out.items()}


_BY_SCRIPT = _languages_by_script()
#: Scripts only one of our languages writes.
_SCRIPT_LANGUAGE = {script: codes[0] for script, codes in _BY_SCRIPT.items() if len(codes) == 1 and script not in _CJK}
# Lingua's candidates per script: our languages written mainly in it (Kazakh's Arabic script
# is told by its letters, lingua's Kazakh is Cyrillic), minus those told apart by letters first.
_LINGUA_GROUPS = {
    "Latin": tuple(lang.code for lang in LANGUAGES if lang.scripts[0] == "Latin"),
    "Cyrillic": tuple(lang.code for lang in LANGUAGES if lang.scripts[0] == "Cyrillic"),
    "Arabic": ("ar", "fa"),
    "Devanagari": tuple(lang.code for lang in LANGUAGES if lang.scripts[0] == "Devanagari"),
}
UNKNOWN = Detection(None, 0.0)


class LanguageDetector:
    """Thread-safe, lazily built detector; `detect(text) -> Detection`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lingua: dict[str, lingua.LanguageDetector] = {}

    def preload(self) -> None:
        """Load every lingua model now (seconds, about 0.5 GB) instead of on the first text of
        each script: a server calls this at start-up so that no request waits for it."""
        if not _lingua_installed():
            return
        for script in _LINGUA_GROUPS:
            self._detector(script)

    def detect(self, text: str) -> Detection:
        """The language of `text`; language None (confidence 0) when there are no letters or the
        text is too short to tell (a few Latin words shared by several languages)."""
        sample = text[:SAMPLE_CHARS]
        counts = script_counts(sample)
        if not counts:
            return UNKNOWN
        script, share = _dominant_script(counts)
        if script == "Han":
            found = detect_han(sample, counts)
            return _found(found.code, share * found.certainty)
        if script in _SCRIPT_LANGUAGE:
            return _found(_SCRIPT_LANGUAGE[script], share)
        if script == "Arabic":
            return self._arabic(sample, counts["Arabic"], share)
        if script == "Devanagari":
            return self._devanagari(sample, share)
        if script == "Latin":
            return self._latin(sample, share)
        if script in _LINGUA_GROUPS:
            return self._lingua_best(script, sample, share)
        return UNKNOWN

    def _arabic(self, sample: str, letters: int, share: float) -> Detection:
        chars = Counter(sample)
        uyghur = sum(chars[c] for c in _UYGHUR_LETTERS) + len(_MEDIAL_ALEF_MAKSURA.findall(sample))
        if uyghur and (uyghur >= 3 or uyghur / letters >= 0.05):
            return _found("kk" if chars[_KAZAKH_HAMZA] else "ug", share * uyghur / (uyghur + 1))
        urdu = sum(chars[c] for c in _URDU_LETTERS)
        if urdu and urdu / letters >= 0.02:
            return _found("ur", share * urdu / (urdu + 1))
        return self._lingua_best("Arabic", sample, share)

    def _devanagari(self, sample: str, share: float) -> Detection:
        words = DEVANAGARI_WORD.findall(sample)
        votes = vote(words, DEVANAGARI_WORDS)
        votes["mr"] += sample.count(_MARATHI_LETTER) + sum(w.endswith(_MARATHI_ENDINGS) for w in words)
        hindi, marathi = votes["hi"], votes["mr"]
        if hindi != marathi:
            code, lead, other = ("hi", hindi, marathi) if hindi > marathi else ("mr", marathi, hindi)
            return _found(code, share * lead / (lead + other + 1))
        if len(words) <= SHORT_WORDS:
            return _found("hi", share * 0.5)  # most Devanagari text is Hindi
        return self._lingua_best("Devanagari", sample, share)

    def _latin(self, sample: str, share: float) -> Detection:
        words = [w.casefold().replace("’", "'") for w in LATIN_WORD.findall(sample)]
        if len(words) > SHORT_WORDS:
            return self._lingua_best("Latin", sample, share)
        ranked = self._lingua_ranked("Latin", sample)
        top_code, top = ranked[0] if ranked else (None, 0.0)
        runner_up = ranked[1][1] if len(ranked) > 1 else 0.0
        votes = vote(words, LATIN_WORDS) + letter_vote(words, LATIN_LETTERS)
        best = leader(votes)
        if best is not None and (top_code == best or top < LINGUA_CERTAIN):
            certainty = max(votes[best] / (votes[best] + 1), top if top_code == best else 0.0)
            return _found(best, share * certainty)
        if top_code is not None and top >= SHORT_MIN_CONFIDENCE and top - runner_up >= SHORT_MIN_LEAD:
            return _found(top_code, share * top)
        return UNKNOWN

    def _lingua_best(self, script: str, sample: str, share: float) -> Detection:
        ranked = self._lingua_ranked(script, sample)
        if not ranked or ranked[0][1] <= 0:
            return UNKNOWN
        code, value = ranked[0]
        return _found(code, share * value)

    def _lingua_ranked(self, script: str, sample: str) -> list[tuple[str, float]]:
        """Our codes with lingua's relative confidences, best first; none where lingua is not
        installed (a partial install: the script rules still answer, the rest is unknown)."""
        if not _lingua_installed():
            return []
        values = self._detector(script).compute_language_confidence_values(sample)
        return [(v.language.iso_code_639_1.name.lower(), v.value) for v in values]

    def _detector(self, script: str) -> lingua.LanguageDetector:
        with self._lock:
            if script not in self._lingua:
                from lingua import IsoCode639_1, LanguageDetectorBuilder
                from lingua import Language as LinguaLanguage

                langs = [LinguaLanguage.from_iso_code_639_1(getattr(IsoCode639_1, code.upper()))
                         for code in _LINGUA_GROUPS[script]]
                # Load the models now, under the lock, rather than inside the first detect call.
                builder = LanguageDetectorBuilder.from_languages(*langs).with_preloaded_language_models()
                self._lingua[script] = builder.build()
            return self._lingua[script]


def _dominant_script(counts: Counter[str]) -> tuple[str, float]:
    """The script carrying most of the text ("Han" stands for Han and kana together) and its
    weighted share of the letters; ties go to the non-Latin script (it was written on purpose)."""
    weights: dict[str, float] = {}
    for script, n in counts.items():
        key = "Han" if script in _CJK else script
        weights[key] = weights.get(key, 0.0) + n * _SCRIPT_WEIGHT.get(script, 1.0)
    script = max(weights, key=lambda s: (weights[s], s != "Latin"))
    return script, weights[script] / sum(weights.values())


@functools.cache
def _lingua_installed() -> bool:
    """lingua-language-detector is a dependency; a machine without it (a partial install)
    detects by script alone, with one warning."""
    if importlib.util.find_spec("lingua") is not None:
        return True
    logger.warning("lingua-language-detector is not installed: languages are told by their script only")
    return False


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
