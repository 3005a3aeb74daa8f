"""Quotations and brackets in a paragraph, found by pairing their marks.

The sentence splitter keeps a quotation or parenthesis of at most `QUOTE_MAX_CHARS`
characters whole: `"I am tired. Let's go home," he said.` is one sentence, and a quoted
speech is translated with both its marks. Longer ones may be split inside, so that a
quoted page still reaches the model one sentence at a time.

Pairing uses a stack. Marks that open in one convention and close in another are resolved
by the mark on top of the stack: “ closes „ (German) and opens otherwise (English); » closes
« (French) and opens otherwise (German »…«). A straight double quote closes an open one and
opens otherwise, except between two letters, where it is a Hebrew gershayim (ד"ר). Single
quotes are not paired: they are apostrophes as often as quotes. Unpaired marks are ignored.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

QUOTE_MAX_CHARS = 300

PAIRS: dict[str, str] = {
    "(": ")", "[": "]", "（": "）", "「": "」", "『": "』", "【": "】", "〔": "〕", "《": "》",
    "〈": "〉", "“": "”", "„": "“", "«": "»", "»": "«", "‹": "›", '"': '"',
}
_CLOSING = frozenset(PAIRS.values())
_COLONS = ":：﹕"
_MARKS = re.compile("[" + re.escape("".join(sorted(set(PAIRS) | _CLOSING))) + "]")


@dataclass(frozen=True)
class QuoteSpan:
    """A quotation or bracket from its opening mark to just after its closing mark."""

    start: int
    end: int
    after_colon: bool  # introduced by a colon (他说：“…”), so it ends the sentence that introduces it

    def holds(self, position: int) -> bool:
        """Whether `position` lies strictly inside, before the closing mark is passed."""
        return self.start < position < self.end


def _is_gershayim(text: str, i: int) -> bool:
    return 0 < i < len(text) - 1 and text[i - 1].isalpha() and text[i + 1].isalpha()


def _span(text: str, start: int, end: int) -> QuoteSpan:
    before = text[:start].rstrip()
    return QuoteSpan(start, end, before.endswith(tuple(_COLONS)))


def quote_spans(text: str) -> list[QuoteSpan]:
    """The paired quotations and brackets of `text` of at most QUOTE_MAX_CHARS, by end."""
    spans: list[QuoteSpan] = []
    stack: list[tuple[str, int]] = []  # (opening mark, offset)
    for found in _MARKS.finditer(text):
        i, ch = found.start(), found.group()
        if ch == '"' and _is_gershayim(text, i):
            continue
        if stack and ch == PAIRS[stack[-1][0]]:
            opened = stack.pop()[1]
        elif ch in PAIRS:
            stack.append((ch, i))
            continue
        elif any(PAIRS[mark] == ch for mark, _ in stack):  # close over marks left open inside
            while PAIRS[stack[-1][0]] != ch:
                stack.pop()
            opened = stack.pop()[1]
        else:
            continue
        if i + 1 - opened <= QUOTE_MAX_CHARS:
            spans.append(_span(text, opened, i + 1))
    return spans
