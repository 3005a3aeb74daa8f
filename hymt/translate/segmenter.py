"""Split a run of text into sentences, and sentences into token-budget chunks.

Both functions return `(piece, separator_after)` pairs whose concatenation is exactly the
input: text is only ever divided, never cut or dropped. The whitespace at a boundary goes
into the separator so that pieces carry no surrounding whitespace of their own.

Sentence rules (the models translate one sentence per request best; docs/reference/protocols.md §9.2):
- Latin-style `.` `!` `?` `…` end a sentence when whitespace (or the end) follows; `.` not
  when the next word starts in lower case, after an abbreviation (Mr., e.g., U.S., z.B.),
  an initial (J. K.), or an ordinal list number at the start ("1. ").
  Decimals (3.14) never split: no whitespace follows their dot.
- Full-width `。！？`, Devanagari `।॥`, Arabic `؟`, Urdu `۔`, Khmer `។៕` and Burmese `။` end a
  sentence with or without a following space.
- Closing quotes and brackets after the end punctuation (`」』）”"»`) stay with the sentence;
  when a letter follows such a quote at once (「…？」と彼は言った), the sentence goes on.
- Thai has no sentence punctuation: a space between Thai letters separates sentences, but
  pieces shorter than `THAI_MIN_CHARS` are kept with their neighbour (spaces also set off
  short phrases).
- A piece with fewer than `MIN_LETTERS` letters ("A.", "1)") joins the next sentence.
"""
from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable

TokenCounter = Callable[[str], int]

MIN_LETTERS = 3
THAI_MIN_CHARS = 12

_CLOSERS = "\"'”’»」』）)]】〕》〉›\u3011"
_NONLATIN_END = "。！？｡．।॥؟۔។៕။‼⁇⁈⁉"
_END = re.compile(rf"(?:[.!?…]+|[{_NONLATIN_END}]+)[{re.escape(_CLOSERS)}]*")
_THAI_SPACE = re.compile(r"(?<=[\u0E00-\u0E7F])[ \u00A0]+(?=[\u0E00-\u0E7F])")
_CLAUSE = re.compile(r"[,;:，；：、﹐]+[\s]*|[\u2013\u2014]\s*")
_SPACE = re.compile(r"\s+")
_WORD_BEFORE = re.compile(r"(\S+)$")
_OPENERS = "\"'“‘«「『（([【〔《〈‹¿¡"

# Lower-cased, without the final dot. Multilingual: the languages we translate from.
ABBREVIATIONS = frozenset(
    """
    mr mrs ms mx dr prof sr sra srta jr st mt ft vs etc al approx appt apt dept est fig figs
    inc ltd co corp no nos vol vols pp pg ch chap sec art ed eds gen col lt sgt capt cmdr rev
    hon gov sen rep pres jan feb mar apr jun jul aug sep sept oct nov dec mon tue tues wed thu
    thur thurs fri sat sun cf ca resp incl excl min max avg tel ext viz ibid op misc
    z.b bzw usw vgl ggf evtl inkl nr str hr fr dipl ing mme mlle cie env p.ex av dña dra lic
    ud uds pág núm tj. tzn np itd wg ul g.m.b.h
    """.split()
)
_DOTTED_ACRONYM = re.compile(r"^(?:[^\W\d_]{1,3}\.)+[^\W\d_]{1,3}$")


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


def _is_abbreviation(head: str) -> bool:
    """True when the word ending at a '.' is an abbreviation, initial or list number."""
    match = _WORD_BEFORE.search(head)
    if not match:
        return False
    word = match.group(1).lstrip(_OPENERS)
    if word.endswith("."):  # "...", or "etc.." -- not an abbreviation question
        return False
    lowered = word.lower()
    if lowered in ABBREVIATIONS or _DOTTED_ACRONYM.match(word):
        return True
    if len(word) == 1 and word.isalpha() and word.isupper():  # an initial: "J. K. Rowling"
        return True
    return word.isdigit() and match.start() == 0  # "1. First item" at the start of a unit


def _boundary_after(text: str, match: re.Match) -> bool:
    """Whether the end punctuation in `match` ends a sentence."""
    end = match.end()
    rest = text[end:]
    if not rest:
        return False  # the end of the text is not a boundary inside it
    punct = match.group(0)
    if any(ch in _NONLATIN_END for ch in punct):
        # 「元気ですか？」と言った / “你来吗？”他问: a quote that runs on into the sentence.
        return not (punct[-1] in _CLOSERS and rest[0].isalpha())
    if not rest[0].isspace():
        return False  # "3.14", "e.g.", "Yahoo!Mail", "?!" mid-token
    following = rest.lstrip()
    if not following:
        return False
    if "." in punct and "!" not in punct and "?" not in punct:
        if following[0].islower():
            return False
        if punct.rstrip(_CLOSERS) == "." and _is_abbreviation(text[: match.start()]):
            return False
    return True


def _raw_sentences(text: str) -> list[tuple[str, str]]:
    pieces: list[tuple[str, str]] = []
    start = 0
    for match in _END.finditer(text):
        if match.end() <= start or not _boundary_after(text, match):
            continue
        ws = _SPACE.match(text, match.end())
        stop = ws.end() if ws else match.end()
        pieces.append((text[start : match.end()], text[match.end() : stop]))
        start = stop
    if start < len(text):
        pieces.append((text[start:], ""))
    return [p for piece, sep in pieces for p in _split_thai(piece, sep)]


def _split_thai(piece: str, sep: str) -> list[tuple[str, str]]:
    """Split at spaces between Thai letters, keeping pieces of at least THAI_MIN_CHARS."""
    result: list[tuple[str, str]] = []
    start = 0
    for match in _THAI_SPACE.finditer(piece):
        left, right = piece[start : match.start()], piece[match.end() :]
        if len(left) >= THAI_MIN_CHARS and len(right) >= THAI_MIN_CHARS:
            result.append((left, match.group(0)))
            start = match.end()
    result.append((piece[start:], sep))
    return result


def split_sentences(text: str) -> list[tuple[str, str]]:
    """Split `text` (no surrounding whitespace) into `(sentence, whitespace_after)` pairs."""
    merged: list[tuple[str, str]] = []
    carry = ""
    for sentence, sep in _raw_sentences(text):
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
    characters (never inside a combining sequence). Nothing is cut: the pieces and their
    separators concatenate to `text`.

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
        if current and count((current + part).strip()) > budget:
            chunks.append(current)
            current = ""
        current += part
    chunks.append(current)
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
    """Longest prefixes that fit, cut only before a character that starts a grapheme."""
    pieces: list[tuple[str, str]] = []
    start = 0
    while start < len(text):
        end = len(text)
        if count(text[start:end]) > budget:
            lo, hi = start + 1, len(text)  # binary search the longest fitting prefix
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if count(text[start:mid]) <= budget:
                    lo = mid
                else:
                    hi = mid - 1
            end = lo
            while end > start + 1 and end < len(text) and _continues_grapheme(text[end]):
                end -= 1
        pieces.append((text[start:end], ""))
        start = end
    return pieces


def _continues_grapheme(ch: str) -> bool:
    return unicodedata.category(ch) in ("Mn", "Mc", "Me") or ch in "\u200d\ufe0f"
