"""Split a run of text into sentences, and sentences into token-budget chunks.

Both functions return `(piece, separator_after)` pairs whose concatenation is exactly the
input: text is only ever divided, never cut or dropped. The whitespace at a boundary goes
into the separator so that pieces carry no surrounding whitespace of their own.

Sentence rules (the models translate one sentence per request best;
docs/quality/sentence-splitting.md measures them). `split_sentences` takes an optional
language, which picks the abbreviation table and the ordinal rule; without one, every table
applies and ordinals need a month or ordinal noun after them.
- `.` `!` `?` `…` (and Greek `;` after a Greek letter) end a sentence when whitespace
  follows and the next word does not start in lower case (`"Really?" she asked`, `etc. and`,
  Dutch `'s Avonds` counts as upper case). Quotes, brackets and dialogue dashes before that
  word are skipped (`? —preguntó`).
- A `.` does not end a sentence after an abbreviation of the language's table
  (abbreviations.py), a single letter (`J. K.`, `z. B.`, `д.`, `د.`, `पु.`) unless it is a
  unit after a number (`10 ч.`) or a nasalised Indic word (`हूँ.`), a dotted acronym
  (`U.S.`, `PGS.TS.`), a list number at the start of a sentence or after a colon, an ordinal
  (`am 3. Oktober`, `2. Dünya`; in German before any noun), or a Thai word (Thai writes dots
  only in abbreviations: `น.`).
- Full-width `。！？`, danda `।॥`, Arabic `؟`, Urdu `۔`, Khmer `។៕`, Burmese `။`, Tibetan
  `།༎` and Armenian `։` end a sentence with or without a following space; not `．` between
  digits (１．５), not a shad after a clause particle (thai_tibetan.py).
- Closing quotes and brackets after the end punctuation stay with the sentence, French
  spaced ones too (`« Tu viens ? »`). A letter right after a closing CJK quote continues the
  sentence (「…？」と, “…？”他问), except in Japanese without a quotative particle
  (「…！」娘は) and in Chinese after a quote introduced by a colon (老师问：“…？”没有人).
- Nothing ends inside a quotation or bracket of at most QUOTE_MAX_CHARS (quotations.py).
- Thai and Tibetan spaces end sentences by the rules of thai_tibetan.py.
- A piece with fewer than `MIN_LETTERS` letters ("A.", "1)") joins the next sentence.
"""
from __future__ import annotations

import bisect
import math
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

import regex

from hymt.languages import Language, get_language
from hymt.translate.abbreviations import (
    GERMAN_SENTENCE_STARTERS,
    NOT_INITIALS,
    ORDINAL_DOT_LANGUAGES,
    ORDINAL_HEADS,
    Abbreviations,
    abbreviations_for,
)
from hymt.translate.graphemes import grapheme_breaks, syllable_breaks
from hymt.translate.quotations import QuoteSpan, quote_spans
from hymt.translate.thai_tibetan import shad_links_clauses, split_at_sentence_spaces

TokenCounter = Callable[[str], int]

MIN_LETTERS = 3

_LATIN_END = ".!?…‼⁇⁈⁉"
_FULL_END = "。！？｡．।॥؟۔។៕။།༎։"
_END = re.compile(rf"[{_LATIN_END}]+|[{_FULL_END}]+|(?<=[\u0370-\u03FF\u1F00-\u1FFF])[;\u037E]")
_CLOSERS = "\"'”’»«“›‹」』）)]】〕》〉"
_SPACED_CLOSERS = "»›”"  # French typography puts a (no-break) space before these
_BOTH_WAYS = "\"“«»‹›"  # close one quotation style, open another
_OPENERS = "\"'“‘„‚«»‹›「『（([【〔《〈¿¡—–-"
_CJK = re.compile(r"[\u3040-\u30FF\u3400-\u4DBF\u4E00-\u9FFF\uF900-\uFAFF]")
_KANA = re.compile(r"[\u3040-\u30FF]")
_JAPANESE_QUOTATIVES = ("と", "って")
_CLUSTER = regex.compile(r"\X")
# Anusvara and candrabindu of Devanagari, Bengali, Gujarati, Gurmukhi, Oriya, Telugu, Kannada.
_NASAL_SIGNS = frozenset("\u0901\u0902\u0981\u0982\u0a01\u0a02\u0a70\u0a81\u0a82\u0b01\u0b02\u0c01\u0c02\u0c81\u0c82")
_DUTCH_ELISION = re.compile(r"['’][st]\s")
_DOTTED_ACRONYM = re.compile(r"^(?:[^\W\d_]{1,3}\.)+[^\W\d_]{1,3}$")
_LONGEST_MAY_END = 12
_LONGEST_CLUSTER = 8  # code points in one letter with its marks (ཀྲཱྀཾ has 5)
_SPACE = re.compile(r"\s+")
_CLAUSE = re.compile(r"[,;:，；：、﹐]+[\s]*|[\u2013\u2014]\s*")


@dataclass(frozen=True)
class _Paragraph:
    """What the boundary rules need to know about the text being split."""

    text: str
    abbreviations: Abbreviations
    ordinal_dots: bool  # the language writes ordinals as "3." (or is not known)
    german: bool
    japanese: bool
    quotes: tuple[QuoteSpan, ...]


def approx_tokens(text: str) -> int:
    """A tokenizer-free estimate: BPE vocabularies give about one token per 3 UTF-8 bytes."""
    return max(1, math.ceil(len(text.encode("utf-8")) / 3))


def _has_letters(text: str, n: int) -> bool:
    """Whether `text` has at least `n` letters; stops at the n-th (split_sentences asks it of
    every sentence, and counting all of them costs ~0.1 us a character)."""
    for ch in text:
        if unicodedata.category(ch).startswith("L"):
            n -= 1
            if n <= 0:
                return True
    return n <= 0


def _next_word(text: str, position: int) -> str:
    """The word after `position`, past whitespace, opening quotes and dialogue dashes."""
    i = position
    while i < len(text) and (text[i].isspace() or text[i] in _OPENERS):
        if _DUTCH_ELISION.match(text, i):  # 's Avonds, 't Is: the sentence starts in lower case
            return "S"
        i += 1
    end = i
    while end < len(text) and not text[end].isspace():
        end += 1
    return text[i:end]


def _is_initial(word: str) -> bool:
    """A single letter with its marks: J., д., د., पु., ডা. A syllable with a nasal sign is a
    word (हूँ, છું), not the name of a letter."""
    return (
        word[:1].isalpha()
        and word not in NOT_INITIALS
        and not any(ch in _NASAL_SIGNS for ch in word)
        and len(word) <= _LONGEST_CLUSTER
        and len(_CLUSTER.findall(word)) == 1
    )


def _follows_number(text: str, word_start: int) -> bool:
    """Whether the word at `word_start` comes right after a number: "10 ч.", "1990 г." (a unit
    or era, which may end the sentence, not an initial)."""
    head = text[max(0, word_start - 8) : word_start]
    return bool(head) and head[-1] == " " and head.rstrip()[-1:].isdigit()


def _is_number_abbreviation(p: _Paragraph, word: str, word_start: int, sentence_start: int, after: str) -> bool:
    """Whether the dot after the number `word` belongs to it: a list number or an ordinal."""
    before = p.text[sentence_start:word_start].rstrip()
    if not before or before.endswith((":", ";")):
        return True  # "1. Unplug it." at the start of a sentence or a list after a colon
    if len(word) > 3 or not p.ordinal_dots:
        return False
    head = after.lower().rstrip(".,;:!?")
    if head in ORDINAL_HEADS:
        return True  # am 3. Oktober, 2. Dünya Savaşı
    return p.german and after[:1].isupper() and head not in GERMAN_SENTENCE_STARTERS  # der 2. Versuch


def _is_abbreviation(p: _Paragraph, dot: int, sentence_start: int, after: str) -> bool:
    """Whether the word before the '.' at `dot` makes it an abbreviation's dot."""
    word_start = dot
    while word_start > sentence_start and not p.text[word_start - 1].isspace():
        word_start -= 1
    word = p.text[word_start:dot].lstrip(_OPENERS)
    if not word or "://" in word or "@" in word or word.lower().startswith("www."):
        return False
    if "\u0E01" <= word[-1] <= "\u0E7F":
        return True  # Thai writes dots only in abbreviations (น., พ.ศ.); Lao ends sentences with them
    lowered = word.lower()
    table = p.abbreviations
    if p.text[max(0, dot - _LONGEST_MAY_END) : dot].lower().endswith(table.may_end):
        return False
    if lowered in table.titles or (lowered.endswith(table.suffixes) and lowered not in table.suffixes):
        return True
    if _DOTTED_ACRONYM.match(word):
        return True
    if _is_initial(word):
        return after[:1].isdigit() or not _follows_number(p.text, dot - len(word))
    if lowered in table.before_number:
        return after[:1].isdigit()
    return word.isdigit() and _is_number_abbreviation(p, word, dot - len(word), sentence_start, after)


def _latin_end(p: _Paragraph, start: int, stop: int, end: int, sentence_start: int) -> bool:
    """Whether `.!?…` at text[start:stop], with closing marks up to `end`, ends a sentence."""
    text = p.text
    if not text[end].isspace():
        # 你好吗?我很好: a half-width mark between CJK letters, no space needed
        return text[start] in "?!" and start > 0 and bool(_CJK.match(text, end)) and bool(_CJK.match(text, start - 1))
    after = _next_word(text, end)
    if not after or after[0].islower():
        return False
    if text[start:stop] == ".":
        return not _is_abbreviation(p, start, sentence_start, after)
    return True


def _full_end(p: _Paragraph, start: int, stop: int, end: int) -> bool:
    """Whether full-width or non-Latin end punctuation at text[start:stop] ends a sentence."""
    text, nxt = p.text, p.text[end]
    if text[start:stop] in "．｡" and text[start - 1 : start].isdigit() and nxt.isdigit():
        return False  # １．５
    if text[start] in "།༎" and shad_links_clauses(text, start):
        return False
    if nxt.isspace() or end == stop or not nxt.isalpha():
        return True
    # A closing quote with a letter after it: 「本当？」と彼女は聞いた / 老师问：“谁知道？”没有人回答
    if p.japanese:
        return not text.startswith(_JAPANESE_QUOTATIVES, end)
    return any(q.end == end and q.after_colon for q in p.quotes)


def _closers_end(p: _Paragraph, position: int) -> int:
    """The end of the closing quotes and brackets after end punctuation at `position`."""
    text, i = p.text, position
    while i < len(text):
        j = i
        while j < len(text) and text[j] in " \u00A0\u202F" and j - i < 2:
            j += 1
        if j < len(text) and text[j] in _CLOSERS and _closes_here(p, j, spaced=j > i):
            i = j + 1
        else:
            return i
    return i


def _closes_here(p: _Paragraph, mark: int, spaced: bool) -> bool:
    """Whether the closing mark at `mark` belongs to the sentence before it. Marks that also
    open quotes (“ in English, « » " in all) count only where they close a paired quotation;
    after a space only French-style closers count."""
    ch = p.text[mark]
    if spaced and ch not in _SPACED_CLOSERS:
        return False
    if spaced or ch in _BOTH_WAYS:
        return any(q.end == mark + 1 for q in p.quotes)
    return True


def _sentence_ends(p: _Paragraph) -> list[tuple[int, int]]:
    """(end of a sentence, start of the next) for every boundary, in order."""
    ends: list[tuple[int, int]] = []
    sentence_start = 0
    for match in _END.finditer(p.text):
        if match.start() < sentence_start:
            continue
        end = _closers_end(p, match.end())
        if end >= len(p.text) or any(q.holds(match.start()) and end < q.end for q in p.quotes):
            continue
        if match.group(0)[0] in _FULL_END:
            is_end = _full_end(p, match.start(), match.end(), end)
        else:
            is_end = _latin_end(p, match.start(), match.end(), end, sentence_start)
        if is_end:
            space = _SPACE.match(p.text, end)
            sentence_start = space.end() if space else end
            ends.append((end, sentence_start))
    return ends


def _paragraph(text: str, language: Language | str | None) -> _Paragraph:
    lang = None if language is None else get_language(language, field="language")
    return _Paragraph(
        text=text,
        abbreviations=abbreviations_for(lang),
        ordinal_dots=lang is None or lang.code in ORDINAL_DOT_LANGUAGES,
        german=lang is not None and lang.code == "de",
        japanese=(lang is not None and lang.code == "ja") or bool(_KANA.search(text)),
        quotes=tuple(quote_spans(text)),
    )


def split_sentences(text: str, language: Language | str | None = None) -> list[tuple[str, str]]:
    """Split `text` (no surrounding whitespace) into `(sentence, whitespace_after)` pairs.

    `language` (a Language or a code) picks that language's abbreviations and ordinal rule;
    without it, every language's abbreviations apply and ordinals are recognised by the
    word after them. Raises UnknownLanguageError (field "language") for an unknown code."""
    p = _paragraph(text, language)
    pieces: list[tuple[str, str]] = []
    start = 0
    for end, next_start in _sentence_ends(p):
        pieces.extend(split_at_sentence_spaces(text[start:end], text[end:next_start]))
        start = next_start
    if start < len(text):
        pieces.extend(split_at_sentence_spaces(text[start:], ""))
    return _join_fragments(pieces)


def _join_fragments(pieces: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Join pieces with fewer than MIN_LETTERS letters to the next one."""
    merged: list[tuple[str, str]] = []
    carry = ""
    for sentence, sep in pieces:
        if carry:
            sentence, carry = carry + sentence, ""
        if sep and not _has_letters(sentence, MIN_LETTERS):
            carry = sentence + sep  # too short to stand alone: it joins the next sentence
            continue
        merged.append((sentence, sep))
    if carry:  # only possible if the text ends in whitespace; keep it anyway
        merged.append((carry.rstrip(), carry[len(carry.rstrip()) :]))
    return merged


def split_to_budget(text: str, budget: int, count: TokenCounter = approx_tokens) -> list[tuple[str, str]]:
    """Split `text` into pieces of at most `budget` tokens, at clauses, then spaces, then
    syllables, then grapheme clusters (graphemes.py). Nothing is cut: the pieces and their
    separators concatenate to `text`. A single grapheme cluster over the budget stays whole.

    A text of at most budget - 1 UTF-8 bytes is not counted: a byte-level BPE token covers at
    least one byte (a SentencePiece tokenizer may add one leading piece), and tokenizing is
    most of the CPU a short request costs a busy server."""
    if budget < 1:
        raise ValueError(f"budget must be >= 1, got {budget}")
    if len(text.encode("utf-8")) + 1 <= budget or count(text) <= budget:
        return [(text, "")]
    for pattern in (_CLAUSE, _SPACE):
        parts = _split_keep(text, pattern)
        if len(parts) > 1:
            return _pack(parts, budget, count)
    return _split_chars(text, budget, count)


def _split_keep(text: str, pattern: re.Pattern) -> list[str]:
    """Cut after each match of `pattern` (the match stays on the left part)."""
    parts, start = [], 0
    for match in pattern.finditer(text):
        if match.end() < len(text) and match.end() > start:
            parts.append(text[start : match.end()])
            start = match.end()
    parts.append(text[start:])
    return [p for p in parts if p]


def _pack(parts: list[str], budget: int, count: TokenCounter) -> list[tuple[str, str]]:
    """Greedily join consecutive parts while they fit; recurse into parts that never fit."""
    chunks: list[str] = []
    current = ""
    for part in parts:
        if current and count((current + part).rstrip()) > budget:
            chunks.append(current)
            current = ""
        current += part
    chunks.append(current)
    if len(chunks) == 1:  # all of it fits once its trailing whitespace is left out
        core = chunks[0].rstrip()
        return [(core, chunks[0][len(core) :])]
    result: list[tuple[str, str]] = []
    for chunk in chunks:
        core = chunk.rstrip()
        tail = chunk[len(core) :]
        sub = split_to_budget(core, budget, count) if core else [("", "")]
        sub[-1] = (sub[-1][0], sub[-1][1] + tail)
        result.extend(sub)
    return _fold_empty(result)


def _fold_empty(pieces: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Move empty pieces' separators onto the previous piece."""
    result: list[tuple[str, str]] = []
    for piece, sep in pieces:
        if not piece and result:
            result[-1] = (result[-1][0], result[-1][1] + sep)
        else:
            result.append((piece, sep))
    return result


def _split_chars(text: str, budget: int, count: TokenCounter) -> list[tuple[str, str]]:
    """Longest prefixes that fit, cut at a syllable boundary where one fits, else at a
    grapheme boundary."""
    graphemes = grapheme_breaks(text)
    syllables = syllable_breaks(text, graphemes)
    pieces: list[tuple[str, str]] = []
    start = 0
    while start < len(text):
        end = (
            _longest_fit(text, start, syllables, budget, count)
            or _longest_fit(text, start, graphemes, budget, count)
            or graphemes[bisect.bisect_right(graphemes, start)]  # one cluster over the budget
        )
        pieces.append((text[start:end], ""))
        start = end
    return pieces


def _longest_fit(text: str, start: int, breaks: list[int], budget: int, count: TokenCounter) -> int | None:
    """The last of `breaks` after `start` whose prefix text[start:break] fits (binary search)."""
    lo, hi = bisect.bisect_right(breaks, start), len(breaks) - 1
    if lo > hi or count(text[start : breaks[lo]]) > budget:
        return None
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count(text[start : breaks[mid]]) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return breaks[lo]
