"""Quality guard: cheap checks that catch the failures community servers see
(docs/reference/protocols.md §9.3): an empty answer, an echo of the source, the wrong script
for the target, runaway repetition, and an answer cut at the token limit (which with our
generous limit means a loop), unless the request asked to run to the limit (`ignore_eos`:
benchmarks force the length).

`check_translation` returns short issue codes; the Translator retries a segment once (with
the family's official sampling) when any is found, unless the call passed retry=False.
"""
from __future__ import annotations

import re
import unicodedata

import numpy as np

from hymt.languages import Language, script_counts

EMPTY, ECHO, WRONG_SCRIPT, REPETITION, LENGTH = "empty", "echo", "wrong_script", "repetition", "length"

#: Fewer letters than this and the script check says nothing (names, numbers, "OK").
MIN_LETTERS_FOR_SCRIPT = 4
#: Han share of the letters above which a non-CJK target is wrong (neosun100's 30 % rule).
MAX_FOREIGN_HAN = 0.3
#: An all-Latin answer for a non-Latin target is only wrong when this long (brands stay Latin).
MIN_LATIN_FOR_NONLATIN_TARGET = 12
#: An identical answer is an echo only for texts at least this long (names stay as they are).
MIN_ECHO_WORDS = 3
MIN_ECHO_UNSPACED = 4
_UNSPACED_SCRIPTS = {"Han", "Hiragana", "Katakana", "Thai", "Khmer", "Myanmar", "Tibetan"}
_KANA = ("Hiragana", "Katakana")
_CONSECUTIVE = re.compile(r"(.{1,40}?)(?:\s*\1){4,}", re.S)
_UNIT = re.compile(r"[\u0E00-\u0FFF\u1000-\u109F\u1780-\u17FF\u3040-\u30FF\u3400-\u9FFF\uAC00-\uD7AF]|\w+")


def _normalize(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def wrong_script(text: str, target: Language) -> bool:
    """True when `text` is clearly not written the way `target` is."""
    counts = script_counts(text)
    letters = sum(counts.values())
    if letters < MIN_LETTERS_FOR_SCRIPT:
        return False
    in_target = sum(counts[s] for s in target.scripts)
    if "Han" not in target.scripts and counts["Han"] / letters > MAX_FOREIGN_HAN:
        return True
    if target.scripts == ("Latin",):
        return in_target / letters < 0.5
    if target.code == "ja" and counts["Han"] >= 8 and not any(counts[k] for k in _KANA):
        return True  # Chinese instead of Japanese
    if "Han" in target.scripts and target.code != "ja":
        non_latin = letters - counts["Latin"]
        if non_latin and sum(counts[k] for k in _KANA) / non_latin > 0.15:
            return True  # Japanese instead of Chinese
    non_latin = letters - counts["Latin"]
    if non_latin == 0:
        return in_target == 0 and counts["Latin"] >= MIN_LATIN_FOR_NONLATIN_TARGET
    return in_target / non_latin < 0.5


def is_echo(source: str, output: str, source_lang: Language | None, target: Language) -> bool:
    """The answer repeats the source although source and target languages differ."""
    if source_lang is not None and source_lang.code == target.code:
        return False
    if not _long_enough_to_echo(source):
        return False
    return _normalize(source) == _normalize(output)


def _long_enough_to_echo(source: str) -> bool:
    """Names and single words legitimately stay as they are ("iPhone", "OK"): only a text
    of MIN_ECHO_WORDS words (or MIN_ECHO_UNSPACED letters of an unspaced script) counts."""
    words = [w for w in source.split() if any(ch.isalpha() for ch in w)]
    if len(words) >= MIN_ECHO_WORDS:
        return True
    unspaced = sum(n for script, n in script_counts(source).items() if script in _UNSPACED_SCRIPTS)
    return unspaced >= MIN_ECHO_UNSPACED


def _repeat_count(unit: str, text: str) -> int:
    return len(re.findall(r"(?:" + re.escape(unit) + r"\s*){5,}", text))


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


def is_repetitive(source: str, output: str) -> bool:
    """A loop: a unit repeated five times in a row (that the source does not repeat), or an
    answer of 30+ units whose 3-grams are mostly the same few."""
    if _may_loop(output):
        for match in _CONSECUTIVE.finditer(output):
            unit = match.group(1)
            if any(ch.isalpha() for ch in unit) and len(match.group(0)) >= 12 and not _repeat_count(unit, source):
                return True
    units = _UNIT.findall(output.casefold())
    if len(units) < 30:
        return False
    grams = [tuple(units[i : i + 3]) for i in range(len(units) - 2)]
    source_units = _UNIT.findall(source.casefold())
    source_ratio = len(set(zip(source_units, source_units[1:], source_units[2:]))) / max(1, len(source_units) - 2)
    return len(set(grams)) / len(grams) < min(0.3, source_ratio * 0.5)


def check_translation(
    source: str,
    output: str,
    *,
    target: Language,
    source_lang: Language | None = None,
    finish_reason: str | None = None,
    ignore_eos: bool = False,
) -> tuple[str, ...]:
    """Issue codes for one segment's answer; empty when it looks like a translation.

    `ignore_eos`: the request's sampling had ignore_eos set, so a "length" finish is what
    was asked for, not a cut answer (the other checks still apply)."""
    if not output.strip():
        return (EMPTY,) if source.strip() else ()
    issues = []
    if is_echo(source, output, source_lang, target):
        issues.append(ECHO)
    elif wrong_script(output, target):
        issues.append(WRONG_SCRIPT)
    if is_repetitive(source, output):
        issues.append(REPETITION)
    if finish_reason == "length" and not ignore_eos:
        issues.append(LENGTH)
    return tuple(issues)
