"""Line breaks in wrapped text: what a joined break reads as, and how wide a line is.

A break inside a wrapped paragraph reads as a space, except between two wide East Asian
characters (Han, kana, fullwidth punctuation): Chinese and Japanese are written without
spaces, so joining their lines adds none (CSS Text 3 removes such segment breaks the same
way). Hangul is written with spaces and keeps one.
"""
from __future__ import annotations

import unicodedata


def _wide(ch: str) -> bool:
    return unicodedata.east_asian_width(ch) in ("W", "F")


def _hangul(ch: str) -> bool:
    code = ord(ch)
    return 0x1100 <= code <= 0x11FF or 0x3130 <= code <= 0x318F or 0xAC00 <= code <= 0xD7AF


def _spaceless(ch: str) -> bool:
    return _wide(ch) and not _hangul(ch)


def join_separator(before: str, after: str) -> str:
    """What a line break between text ending in `before` and text starting with `after`
    reads as: "" between two spaceless wide characters, else " "."""
    if before and after and _spaceless(before[-1]) and _spaceless(after[0]):
        return ""
    return " "


def display_width(text: str) -> int:
    """Columns `text` takes in a monospaced font: wide characters take two, combining marks
    none, a tab runs to the next multiple of 8."""
    width = 0
    for ch in text.expandtabs(8):
        if unicodedata.combining(ch):
            continue
        width += 2 if _wide(ch) else 1
    return width


def first_word(text: str) -> str:
    """The first thing a wrapper could have put on the line before: up to the first space,
    or a single wide character (wide scripts may break between any two characters)."""
    if text[:1] and _wide(text[0]):
        return text[0]
    end = 0
    while end < len(text) and not text[end].isspace() and not _wide(text[end]):
        end += 1
    return text[:end]
