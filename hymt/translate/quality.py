"""Quality guard: cheap checks of one translated segment, run on every answer.

`assess_translation` returns a `Verdict`: the issues found, or, for an answer that repeats its
source on purpose, why that is right (`verbatim`). What to do about a verdict (retry, which
sampling, which answer to keep) is hymt.translate.retry_policy's business.

Issues and their severity (`SEVERITY`; docs/quality/quality-guard.md has the measured rates):

| issue          | severity | the answer ...                                                          |
|----------------|----------|-------------------------------------------------------------------------|
| empty          | hard     | is blank although the source is not                                     |
| repetition     | hard     | repeats a unit 5+ times in a row (and over twice as often as the source |
|                |          | repeats one), or is 30+ units whose 3-grams are mostly the same few     |
| length         | hard     | stopped at the token limit (unless the request ran to it: ignore_eos)   |
| wrong_script   | hard     | is not written the way the target is: Han in a Latin answer, kana for   |
|                |          | Chinese, Chinese-only characters for Japanese, a script none of our     |
|                |          | languages uses (Lao for Thai)                                           |
| wrong_language | hard     | is in the target's script but, by the language detector, another        |
|                |          | language (French for German, Russian for Ukrainian, Urdu for Persian)   |
| echo           | soft     | repeats a source of 3+ words that is nothing kept verbatim on purpose,  |
|                |          | and nothing shows it is in the wrong language                           |

Hard: the answer is wrong. Soft: it may be wrong; it is reported and not cached, but a sampled
retry is likelier to make a right answer worse than a wrong one right.

The detector decides only where the script cannot (Latin, Cyrillic, Arabic, Devanagari, Han)
and only when it is confident and the answer long enough: a short answer is never flagged on
its word alone. Languages that write the same text the same way (`CLOSE_LANGUAGES`) never
count as wrong for each other.
"""
from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

import numpy as np

from hymt.errors import InvalidInputError
from hymt.languages import LANGUAGES, Language, script_counts
from hymt.translate.detect import LanguageDetector
from hymt.translate.result import Detection
from hymt.translate.verbatim import has_letters, looks_like_code, looks_like_command, looks_like_name


class QualityIssue(StrEnum):
    """What is wrong with an answer (the codes reported in `Segment.issues`)."""

    EMPTY = "empty"
    ECHO = "echo"
    WRONG_SCRIPT = "wrong_script"
    WRONG_LANGUAGE = "wrong_language"
    REPETITION = "repetition"
    LENGTH = "length"
    MARKUP = "markup"  # the answer broke the inline tags; the plain translation was kept


class Severity(StrEnum):
    HARD = "hard"  # the answer is wrong
    SOFT = "soft"  # the answer may be wrong


#: The severity of each issue (the table in the module doc).
SEVERITY: Mapping[QualityIssue, Severity] = MappingProxyType({
    QualityIssue.EMPTY: Severity.HARD,
    QualityIssue.REPETITION: Severity.HARD,
    QualityIssue.LENGTH: Severity.HARD,
    QualityIssue.WRONG_SCRIPT: Severity.HARD,
    QualityIssue.WRONG_LANGUAGE: Severity.HARD,
    QualityIssue.MARKUP: Severity.HARD,
    QualityIssue.ECHO: Severity.SOFT,
})


#: Each issue in plain words (what the CLI and the docs tell a user).
DESCRIPTIONS: Mapping[QualityIssue, str] = MappingProxyType({
    QualityIssue.EMPTY: "the answer is empty",
    QualityIssue.ECHO: "the answer repeats the source",
    QualityIssue.WRONG_SCRIPT: "the answer is not written in the target language's script",
    QualityIssue.WRONG_LANGUAGE: "the answer is in another language than the target",
    QualityIssue.REPETITION: "the answer loops",
    QualityIssue.LENGTH: "the answer was cut at the token limit",
    QualityIssue.MARKUP: "the answer broke the inline markup; the plain translation was kept with the markup around it",
})


class VerbatimReason(StrEnum):
    """Why an answer identical to its source is right."""

    SAME_LANGUAGE = "same_language"  # the source language is the target or reads the same (id/ms)
    NO_LETTERS = "no_letters"  # a number, date, phone number
    CODE = "code"  # a URL, e-mail address, path, command line, query
    NAME = "name"  # a name, product, title or address
    TARGET_LANGUAGE = "target_language"  # the detector reads the segment as the target language
    SHORT = "short"  # under 3 words: nothing tells a kept name from an untranslated word


@dataclass(frozen=True)
class Verdict:
    """The guard's judgement of one answer.

    Attributes:
        issues: what is wrong, in a fixed order (echo / script / language, repetition, length).
        verbatim: set when the answer repeats its source and that is right; then there are no
            issues, and the answer is neither retried nor kept out of the cache.
    """

    issues: tuple[QualityIssue, ...] = ()
    verbatim: VerbatimReason | None = None

    def __post_init__(self) -> None:
        valid = ", ".join(QualityIssue)
        for issue in self.issues:
            if not isinstance(issue, QualityIssue):
                raise InvalidInputError(f"issues must be QualityIssue members ({valid}), got {issue!r}",
                                        field="issues")
        if self.verbatim is not None and self.issues:
            raise InvalidInputError("a verdict with issues cannot be verbatim", field="verbatim")

    @property
    def verbatim_ok(self) -> bool:
        """The answer repeats its source on purpose (a name, code, a number, the target language)."""
        return self.verbatim is not None

    @property
    def passed(self) -> bool:
        """No issue: the answer may be cached."""
        return not self.issues

    @property
    def hard(self) -> bool:
        """Some issue says the answer is wrong."""
        return any(SEVERITY[issue] is Severity.HARD for issue in self.issues)


#: Pairs of languages whose texts are often identical and both right (Indonesian and Malay;
#: Cantonese written with the characters of either Chinese standard).
CLOSE_LANGUAGES: frozenset[frozenset[str]] = frozenset({
    frozenset({"id", "ms"}), frozenset({"zh", "yue"}), frozenset({"zh-Hant", "yue"}),
})

#: Fewer letters than this and the script check says nothing (names, numbers, "OK").
MIN_LETTERS_FOR_SCRIPT = 4
#: Han share of the letters above which a non-CJK target is wrong (neosun100's 30 % rule).
MAX_FOREIGN_HAN = 0.3
#: An all-Latin answer for a non-Latin target is only wrong when this long (brands stay Latin).
MIN_LATIN_FOR_NONLATIN_TARGET = 12
#: Han characters (without kana) from which a Japanese answer may be judged Chinese.
MIN_HAN_FOR_CHINESE = 8
#: An identical answer is an echo only for texts at least this long (names stay as they are).
MIN_ECHO_WORDS = 3
MIN_ECHO_UNSPACED = 4
#: The detector judges an answer of at least this many letters of the target's script...
MIN_LETTERS_FOR_LANGUAGE = 20
#: ... and flags it only at this confidence (Detection.confidence: script share x lingua's value).
MIN_LANGUAGE_CONFIDENCE = 0.7
#: An answer identical to its source needs less: the echo is a second sign of no translation.
ECHO_LANGUAGE_CONFIDENCE = 0.5
#: Han is judged from fewer letters (a character is a word), and only at a higher confidence:
#: the detector gives 0.8 x Han share to text with no character telling the standards apart.
MIN_HAN_FOR_LANGUAGE = 8
MIN_HAN_CONFIDENCE = 0.9
#: The detector reads at most this much of an answer: its cost grows with the text, its answer
#: does not change after a sentence or two.
DETECT_SAMPLE_CHARS = 80

# Scripts that several of our languages write, so the script alone cannot tell them apart.
_SHARED_SCRIPTS = frozenset(s for s, n in Counter(lang.scripts[0] for lang in LANGUAGES).items() if n > 1)
_UNSPACED_SCRIPTS = {"Han", "Hiragana", "Katakana", "Thai", "Khmer", "Myanmar", "Tibetan"}
_KANA = ("Hiragana", "Katakana")
# Characters Chinese writes and Japanese does not: simplified forms Japanese never adopted,
# traditional forms it replaced, and Chinese-only function words.
_CHINESE_ONLY = frozenset(
    "这们说个对为时还么过发现问题应该从间样气业产务处员药线总视页网络码县乡镇飞鸟鱼龙风义听读买卖钱银铁错欢"
    "爱笔纸计标备习惯环变远场归导专齐团圆满战兴历师层验证传统营养农华梦厅钟际电车东长门马见书语开关岁谁"
    "你她您很吗呢吧啊哪咱啥怎"
    "這們說來對麼從嗎與學國會點"
)
_CONSECUTIVE = re.compile(r"(.{1,40}?)(?:\s*\1){4,}", re.S)
# A unit the source repeats three times or more in a row ("加油！加油！加油！").
_SOURCE_RUN = re.compile(r"(.{1,40}?)(?:\s*\1){2,}", re.S)
_UNIT = re.compile(r"[\u0E00-\u0FFF\u1000-\u109F\u1780-\u17FF\u3040-\u30FF\u3400-\u9FFF\uAC00-\uD7AF]|\w+")
_LETTER = re.compile(r"[^\W\d_]")


def reads_the_same(a: Language, b: Language) -> bool:
    """The same language, or two whose texts are often identical (CLOSE_LANGUAGES)."""
    return a.code == b.code or frozenset({a.code, b.code}) in CLOSE_LANGUAGES


def _normalize(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def _unlisted_letters(text: str, listed: int) -> int:
    """Letters of scripts not in the languages table (Lao, Georgian, ...). Counted only when
    under half the visible characters are letters of listed scripts, so text in a listed script
    never pays for the count."""
    if 2 * listed >= len(text) - text.count(" "):
        return 0
    return max(0, len(_LETTER.findall(text)) - listed)


def wrong_script(text: str, target: Language, counts: Counter | None = None) -> bool:
    """True when `text` is clearly not written the way `target` is (`counts`: its
    script_counts, when the caller has them)."""
    counts = script_counts(text) if counts is None else counts
    letters = sum(counts.values())
    if _unlisted_letters(text, letters) >= max(MIN_LETTERS_FOR_SCRIPT, letters):
        return True  # a script none of our languages writes: Lao for Thai
    if letters < MIN_LETTERS_FOR_SCRIPT:
        return False
    in_target = sum(counts[s] for s in target.scripts)
    if "Han" not in target.scripts and counts["Han"] / letters > MAX_FOREIGN_HAN:
        return True
    if target.scripts == ("Latin",):
        return in_target / letters < 0.5
    kana = sum(counts[k] for k in _KANA)
    if target.code == "ja" and counts["Han"] >= MIN_HAN_FOR_CHINESE and not kana and not _CHINESE_ONLY.isdisjoint(text):
        return True  # Chinese instead of Japanese; Japanese written in kanji only has none of these
    non_latin = letters - counts["Latin"]
    if "Han" in target.scripts and target.code != "ja" and non_latin and kana / non_latin > 0.15:
        return True  # Japanese instead of Chinese
    if non_latin == 0:
        return in_target == 0 and counts["Latin"] >= MIN_LATIN_FOR_NONLATIN_TARGET
    return in_target / non_latin < 0.5


def _long_enough_to_echo(source: str) -> bool:
    """Names and single words legitimately stay as they are ("iPhone", "OK"): only a text
    of MIN_ECHO_WORDS words (or MIN_ECHO_UNSPACED letters of an unspaced script) counts."""
    words = [w for w in source.split() if any(ch.isalpha() for ch in w)]
    if len(words) >= MIN_ECHO_WORDS:
        return True
    unspaced = sum(n for script, n in script_counts(source).items() if script in _UNSPACED_SCRIPTS)
    return unspaced >= MIN_ECHO_UNSPACED


def _may_loop(output: str) -> bool:
    """False when _CONSECUTIVE cannot match: the regex backtracks over 40 unit lengths at every
    position (~0.35 ms for a 250-character answer, a fifth of the server's CPU per request
    in an H200 load test); this test is ~4x cheaper and exact as a filter. With whitespace
    removed, a unit of p <= 40 characters repeated five times is a run of 4p characters
    each equal to the one p further on."""
    chars = np.frombuffer("".join(output.split()).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    n = len(chars)
    if n < 5:
        return False
    periods = np.arange(1, min(40, n // 5) + 1, dtype=np.int32)  # [P]
    pos = np.arange(n, dtype=np.int32)  # [n]
    padded = np.concatenate([chars, np.full(len(periods), 0xFFFFFFFF, dtype=np.uint32)])  # no code point
    same = padded[pos[None, :] + periods[:, None]] == chars[None, :]  # [P, n]
    last_break = np.maximum.accumulate(np.where(same, 0, pos[None, :] + 1), axis=1)  # [P, n]
    run = (pos + 1)[None, :] - last_break  # [P, n] length of the run of equal pairs ending at each position
    return bool((run.max(axis=1) >= 4 * periods).any())


def _repeats(match: re.Match) -> int:
    """How many times the unit (group 1) occurs in a run of it (group 0)."""
    unit = "".join(match.group(1).split())
    return len("".join(match.group(0).split())) // len(unit) if unit else 0


def _allowed_repeats(source: str) -> int:
    """How often the answer may repeat a unit in a row: four times, or twice what the source
    repeats ("加油！" five times may come back as "Go! Go! Go! Go! Go!" or "Go, go!" x 5)."""
    most = max((_repeats(m) for m in _SOURCE_RUN.finditer(source)
                if len(m.group(0)) >= 4 and any(ch.isalpha() for ch in m.group(1))), default=0)
    return 2 * most if most >= 3 else 4


def is_repetitive(source: str, output: str) -> bool:
    """A loop: a unit repeated five times in a row (more than the source repeats one allows),
    or an answer of 30+ units whose 3-grams are mostly the same few."""
    if _may_loop(output):
        allowed = None
        for match in _CONSECUTIVE.finditer(output):
            if not any(ch.isalpha() for ch in match.group(1)) or len(match.group(0)) < 12:
                continue
            allowed = _allowed_repeats(source) if allowed is None else allowed
            if _repeats(match) > allowed:
                return True
    units = _UNIT.findall(output.casefold())
    if len(units) < 30:
        return False
    grams = [tuple(units[i : i + 3]) for i in range(len(units) - 2)]
    source_units = _UNIT.findall(source.casefold())
    source_ratio = len(set(zip(source_units, source_units[1:], source_units[2:]))) / max(1, len(source_units) - 2)
    return len(set(grams)) / len(grams) < min(0.3, source_ratio * 0.5)


def _detect(output: str, counts: Counter, target: Language, detector: LanguageDetector | None) -> Detection | None:
    """The detector's reading of an answer written mainly in the target's main script, when
    several of our languages share that script; None where the script already decides."""
    script = target.scripts[0]
    if detector is None or script not in _SHARED_SCRIPTS or not counts:
        return None
    if max(counts, key=counts.__getitem__) != script:
        return None
    sample = output
    if len(output) > DETECT_SAMPLE_CHARS:
        cut = output.rfind(" ", DETECT_SAMPLE_CHARS // 2, DETECT_SAMPLE_CHARS)
        sample = output[: cut if cut > 0 else DETECT_SAMPLE_CHARS]
    return detector.detect(sample)


def _other_language(detection: Detection | None, target: Language, confidence: float) -> Language | None:
    """The language the detector found, when it is not the target and the detector is sure."""
    if detection is None or detection.language is None:
        return None
    if target.scripts[0] == "Han":
        confidence = max(confidence, MIN_HAN_CONFIDENCE)
    if detection.confidence < confidence or reads_the_same(detection.language, target):
        return None
    return detection.language


def _language_issue(output: str, counts: Counter, target: Language,
                    detector: LanguageDetector | None) -> QualityIssue | None:
    """Wrong script, or the right script and a language the detector is sure is another."""
    if 2 * counts["Latin"] > sum(counts.values()) and (looks_like_name(output) or looks_like_code(output)):
        return None  # names, products and code are written in Latin letters in every language
    if wrong_script(output, target, counts):
        return QualityIssue.WRONG_SCRIPT
    script = target.scripts[0]
    if counts[script] < (MIN_HAN_FOR_LANGUAGE if script == "Han" else MIN_LETTERS_FOR_LANGUAGE):
        return None
    detection = _detect(output, counts, target, detector)
    if _other_language(detection, target, MIN_LANGUAGE_CONFIDENCE) is not None:
        return QualityIssue.WRONG_LANGUAGE
    return None


def _judge_echo(source: str, output: str, counts: Counter, source_lang: Language | None, target: Language,
                detector: LanguageDetector | None) -> VerbatimReason | tuple[QualityIssue, ...]:
    """Why an answer identical to its source is right, or what is wrong with it."""
    if source_lang is not None and reads_the_same(source_lang, target):
        return VerbatimReason.SAME_LANGUAGE
    if not has_letters(output):
        return VerbatimReason.NO_LETTERS
    if looks_like_code(output):
        return VerbatimReason.CODE
    if looks_like_name(output, han_target="Han" in target.scripts):
        return VerbatimReason.NAME
    if wrong_script(output, target, counts):
        return QualityIssue.ECHO, QualityIssue.WRONG_SCRIPT
    if not _long_enough_to_echo(source):
        return VerbatimReason.SHORT
    detection = _detect(output, counts, target, detector)
    if _other_language(detection, target, ECHO_LANGUAGE_CONFIDENCE) is not None:
        return QualityIssue.ECHO, QualityIssue.WRONG_LANGUAGE
    if detection is not None and detection.language is not None and detection.confidence >= ECHO_LANGUAGE_CONFIDENCE:
        return VerbatimReason.TARGET_LANGUAGE  # (not another language, so the target or a close one)
    if looks_like_command(output):
        return VerbatimReason.CODE  # lowercase words the detector finds no language in
    return (QualityIssue.ECHO,)


def assess_translation(
    source: str,
    output: str,
    *,
    target: Language,
    source_lang: Language | None = None,
    finish_reason: str | None = None,
    ignore_eos: bool = False,
    detector: LanguageDetector | None = None,
) -> Verdict:
    """The guard's verdict on one segment's answer.

    Args:
        source / output: the segment and the cleaned answer.
        target / source_lang: the languages asked for (source_lang None: unknown).
        finish_reason: the engine's ("stop", "length", ...); "length" is a cut answer...
        ignore_eos: ...unless the request's sampling ran to the limit on purpose.
        detector: the language detector, to catch a wrong language in the right script;
            None checks scripts only (and costs nothing more).
    """
    if not output.strip():
        return Verdict((QualityIssue.EMPTY,)) if source.strip() else Verdict()
    counts = script_counts(output)
    found: VerbatimReason | tuple[QualityIssue, ...]
    if _normalize(source) == _normalize(output):
        found = _judge_echo(source, output, counts, source_lang, target, detector)
    else:
        issue = _language_issue(output, counts, target, detector)
        found = (issue,) if issue is not None else ()
    tail = []
    if is_repetitive(source, output):
        tail.append(QualityIssue.REPETITION)
    if finish_reason == "length" and not ignore_eos:
        tail.append(QualityIssue.LENGTH)
    if isinstance(found, VerbatimReason):
        return Verdict(tuple(tail)) if tail else Verdict(verbatim=found)
    return Verdict((*found, *tail))


def check_translation(
    source: str,
    output: str,
    *,
    target: Language,
    source_lang: Language | None = None,
    finish_reason: str | None = None,
    ignore_eos: bool = False,
) -> tuple[QualityIssue, ...]:
    """The issues of `assess_translation` without the detector (scripts only)."""
    return assess_translation(source, output, target=target, source_lang=source_lang,
                              finish_reason=finish_reason, ignore_eos=ignore_eos).issues
