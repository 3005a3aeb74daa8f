"""A unit of a document as the segments the model translates: sentences, then budget chunks.

Sentences stay separate requests (one sentence per request: docs/reference/protocols.md
§9.2 reports dropped sentences when many are packed in one prompt). A split never falls inside
an inline tag or between a paired tag's ends (the tag would reach the model cut in two), and a
piece over the token budget is split further at clauses, spaces or graphemes, never cut.

Invariant: a unit's pieces and their separators concatenate to the unit's text.
"""
from __future__ import annotations

from dataclasses import dataclass

from hymt.documents.inline_tags import TAG_PATTERN, balanced_pieces, plain_text
from hymt.documents.translatable import is_translatable as has_letters
from hymt.documents.units import Unit
from hymt.languages import Language
from hymt.translate.segmenter import TokenCounter, split_sentences, split_to_budget

#: Default token budget of one segment (community servers found <150-250 tokens reliable).
DEFAULT_MAX_SEGMENT_TOKENS = 200

def is_translatable(text: str) -> bool:
    """True when the text of a segment (tags aside) is worth a model request."""
    return has_letters(plain_text(text))


@dataclass(frozen=True)
class Piece:
    """One segment of a unit: the text the model reads and the separator after it."""

    text: str
    separator: str
    translatable: bool


def unit_pieces(unit: Unit, *, budget: int, count: TokenCounter, language: Language | None = None) -> list[Piece]:
    """`unit` as segments (see the module doc); leading and trailing whitespace of the unit
    go into separators, so no piece carries surrounding whitespace of its own."""
    text = unit.text
    core = text.strip()
    if not core:
        return [Piece("", text, False)]
    lead = text[: len(text) - len(text.lstrip())]
    trail = text[len(lead) + len(core):]
    raw = split_sentences(core, language) if unit.split else [(core, "")]
    pieces: list[tuple[str, str]] = []
    for sentence, separator in balanced_pieces(_whole_tags(raw)):
        chunks = balanced_pieces(_whole_tags(split_to_budget(sentence, budget, count)))
        chunks[-1] = (chunks[-1][0], chunks[-1][1] + separator)
        pieces.extend(chunks)
    result = [Piece("", lead, False)] if lead else []
    result += [Piece(p, s, is_translatable(p)) for p, s in pieces]
    last = result[-1]
    result[-1] = Piece(last.text, last.separator + trail, last.translatable)
    return result


def _whole_tags(pieces: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Pieces merged where a cut falls inside a tag's own text (`<s1` | `2>`)."""
    joined = "".join(p + s for p, s in pieces)
    inside = {i for m in TAG_PATTERN.finditer(joined) for i in range(m.start() + 1, m.end())}
    if not inside:
        return pieces
    merged: list[tuple[str, str]] = []
    offset = 0  # where the current piece starts in `joined`
    for piece, separator in pieces:
        if merged and offset in inside:
            prev, prev_separator = merged.pop()
            merged.append((prev + prev_separator + piece, separator))
        else:
            merged.append((piece, separator))
        offset += len(piece) + len(separator)
    return merged
