"""Sentence rules for Thai and Tibetan, where the same mark separates clauses and sentences.

Thai has no sentence punctuation: a space ends a sentence, but spaces also set off clauses,
list items and phrases. A Thai space ends a sentence when
- the text before it ends in a polite or final particle (ครับ, ค่ะ, ...), or
- both the text since the last sentence end and the clause after the space have at least
  `THAI_MIN_CHARS` characters,
and never when the clause after it opens with a connective (และ "and", เพราะ "because", ...)
or has จึง/ก็ ("so", "then") among its first characters (เราจึง... "so we ...").

Tibetan ends sentences and clauses alike with a shad (།). A shad after a clause-linking
particle (ཏེ, ནས, ...) does not end a sentence. After a final ག the shad is not written:
a space after the sentence-final auxiliary འདུག ends the sentence.
"""
from __future__ import annotations

import re

THAI_MIN_CHARS = 12

THAI_FINAL_PARTICLES = ("ครับ", "ค่ะ", "คะ", "จ้ะ", "จ้า", "ขอรับ")
THAI_CONNECTIVES = (
    "และ", "แต่", "หรือ", "ซึ่ง", "เพราะ", "เพื่อ", "โดย", "จึง", "ว่า", "ก็", "ให้", "ถ้า", "หาก",
    "แม้", "เช่น", "ได้แก่", "รวมถึง", "ตลอดจน", "เนื่องจาก",
)
# Words that start with a connective's letters but are not one (แต่ง "dress", เพื่อน "friend").
THAI_NOT_CONNECTIVES = ("แต่ง", "แต่ละ", "เพื่อน", "ว่าง", "ว่าย", "ให้อภัย")
# Connectives that follow the clause's subject: "เราจึง" (so we), "เขาก็" (then he).
THAI_SECOND_POSITION = ("จึง", "ก็")
_SECOND_POSITION_WINDOW = 10

# Syllables (without their tsheg) after which a shad links clauses.
TIBETAN_CLAUSE_PARTICLES = frozenset({"ཏེ", "སྟེ", "དེ", "ཞིང", "ཅིང", "ཤིང", "ནས", "ན", "ཀྱང", "ཡང"})
TIBETAN_FINAL_WITHOUT_SHAD = ("འདུག",)

_SPACE_BREAK = re.compile(
    # Thai letter, space, Thai letter; never before ๆ (U+0E46, it repeats the previous word).
    r"(?P<thai>(?<=[\u0E01-\u0E4F])[ \u00A0]+(?=[\u0E01-\u0E45\u0E47-\u0E4F]))"
    rf"|(?P<tibetan>(?<=(?:{'|'.join(TIBETAN_FINAL_WITHOUT_SHAD)}))[ \u00A0]+(?=[\u0F40-\u0FBC]))"
)
_NOT_TIBETAN_LETTER = re.compile(r"[^\u0F40-\u0FBC]")
_LONGEST_SYLLABLE = 16


def _is_thai_connective(clause: str) -> bool:
    if clause.startswith(THAI_NOT_CONNECTIVES):
        return False
    return clause.startswith(THAI_CONNECTIVES) or any(
        word in clause[:_SECOND_POSITION_WINDOW] for word in THAI_SECOND_POSITION
    )


def _thai_sentence_break(before: str, clause_after: str) -> bool:
    """Whether the space between `before` (since the last sentence end) and the next clause
    ends a sentence."""
    if _is_thai_connective(clause_after):
        return False
    if before.endswith(THAI_FINAL_PARTICLES):
        return True
    return len(before) >= THAI_MIN_CHARS and len(clause_after) >= THAI_MIN_CHARS


def split_at_sentence_spaces(piece: str, sep: str) -> list[tuple[str, str]]:
    """Split `piece` at the Thai and Tibetan spaces that end a sentence; `sep` follows the last."""
    spaces = list(_SPACE_BREAK.finditer(piece))
    result: list[tuple[str, str]] = []
    start = 0
    for i, space in enumerate(spaces):
        if space.group("thai"):
            clause_end = spaces[i + 1].start() if i + 1 < len(spaces) else len(piece)
            if not _thai_sentence_break(piece[start : space.start()], piece[space.end() : clause_end]):
                continue
        result.append((piece[start : space.start()], space.group(0)))
        start = space.end()
    result.append((piece[start:], sep))
    return result


def shad_links_clauses(text: str, shad: int) -> bool:
    """Whether the shad at offset `shad` follows a clause-linking particle."""
    head = text[max(0, shad - _LONGEST_SYLLABLE) : shad].rstrip().rstrip("\u0F0B")  # ང་། keeps its tsheg
    return _NOT_TIBETAN_LETTER.split(head)[-1] in TIBETAN_CLAUSE_PARTICLES
