"""Where a run of text without spaces may be cut: grapheme and syllable boundaries.

A cut must never fall inside a grapheme cluster (a letter with its vowel signs, tone marks,
Myanmar medials and asat, Khmer subscripts after a coeng): the `regex` module's `\\X`
(Unicode extended grapheme clusters) finds them, and no cut falls before a combining mark
even where the Unicode rules allow one (Myanmar ာ after ေ).

Syllable boundaries are a subset, by script rules (no dictionary):
- Thai, Lao: not before a following vowel or sign (ะ า ำ ๅ ๆ ฯ, ະ າ ຳ ໆ), not after a
  leading vowel (เ แ โ ใ ไ, ເ ແ ໂ ໃ ໄ);
- Myanmar: not before a consonant that an asat (်) or a virama (္) closes or stacks, not
  after a virama;
- Khmer: not before a consonant that a bantoc (់) closes, not after a coeng (្);
- Tibetan: only after a tsheg (་), a shad or a space.
Other scripts: every grapheme boundary is a syllable boundary.
"""
from __future__ import annotations

import unicodedata

import regex

_CLUSTER = regex.compile(r"\X")

_THAI_LAO_FOLLOWING = frozenset("\u0e30\u0e32\u0e33\u0e45\u0e46\u0e2f\u0eb0\u0eb2\u0eb3\u0ec6")
_THAI_LAO_LEADING = frozenset("\u0e40\u0e41\u0e42\u0e43\u0e44\u0ec0\u0ec1\u0ec2\u0ec3\u0ec4")
_MYANMAR_CLOSERS = frozenset("\u103a\u1039")  # asat, virama
_KHMER_CLOSERS = frozenset("\u17cb")  # bantoc
_STACKERS = frozenset("\u1039\u17d2")  # Myanmar virama, Khmer coeng
_TIBETAN_AFTER = frozenset("\u0f0b\u0f0d\u0f0e\u0f14 \u00a0")  # tsheg, shads, spaces


def _script_of(ch: str) -> str:
    point = ord(ch)
    if 0x0E00 <= point <= 0x0EFF:
        return "thai-lao"
    if 0x1000 <= point <= 0x109F:
        return "myanmar"
    if 0x1780 <= point <= 0x17FF:
        return "khmer"
    if 0x0F00 <= point <= 0x0FFF:
        return "tibetan"
    return "other"


def grapheme_breaks(text: str) -> list[int]:
    """Offsets in (0, len(text)] where a cut leaves every grapheme cluster whole."""
    breaks = []
    for cluster in _CLUSTER.finditer(text):
        end = cluster.end()
        if end == len(text) or not unicodedata.category(text[end]).startswith("M"):
            breaks.append(end)
    return breaks


def _splits_syllable(text: str, i: int) -> bool:
    """Whether a cut at grapheme boundary `i` (0 < i < len) splits a syllable."""
    before, after = text[i - 1], text[i]
    following = text[i + 1] if i + 1 < len(text) else ""
    script = _script_of(after) if _script_of(after) != "other" else _script_of(before)
    if script == "thai-lao":
        return after in _THAI_LAO_FOLLOWING or before in _THAI_LAO_LEADING
    if script == "myanmar":
        return before in _STACKERS or following in _MYANMAR_CLOSERS
    if script == "khmer":
        return before in _STACKERS or following in _KHMER_CLOSERS
    if script == "tibetan":
        return before not in _TIBETAN_AFTER
    return False


def syllable_breaks(text: str, graphemes: list[int]) -> list[int]:
    """The grapheme breaks of `text` (from grapheme_breaks) that also keep syllables of Thai,
    Lao, Myanmar, Khmer and Tibetan whole."""
    return [i for i in graphemes if i == len(text) or not _splits_syllable(text, i)]
