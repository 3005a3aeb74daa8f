"""Which glossary entries a segment contains: the terms the terminology template passes on.

Matching rules:
- In scripts written with spaces between words, a term matches whole words only: "cat" is
  not in "Concatenate". In scripts without spaces (Chinese, Japanese, Thai, ...) and in
  Korean, a term matches anywhere, since there are no word boundaries to look for.
- Case is ignored, except for terms that are all capitals or at most two letters long:
  "US" must not fire on "Let us go", "IT" on "It is", "AI" on "J'ai".

A glossary is indexed once per translate call (`GlossaryIndex`): a term is looked up by its
first word, so a segment costs one pass over its words rather than one regex per term.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from hymt.languages import UNSPACED_SCRIPTS, char_script

Glossary = tuple[tuple[str, str], ...]

# Scripts where a term matches as a substring: those written without spaces between words, and
# Hangul, where particles attach to the noun ("서울에서" contains the term "서울").
SUBSTRING_SCRIPTS = UNSPACED_SCRIPTS | {"Hangul"}
SHORT_TERM_LETTERS = 2
_WORD = re.compile(r"\w+")


def case_sensitive(term: str) -> bool:
    """True for all-capital and very short terms (matched with their case)."""
    letters = [ch for ch in term if ch.isalpha()]
    return len(letters) <= SHORT_TERM_LETTERS or (any(ch.isupper() for ch in letters)
                                                  and not any(ch.islower() for ch in letters))


def _unspaced(term: str) -> bool:
    return char_script(term[0]) in SUBSTRING_SCRIPTS or char_script(term[-1]) in SUBSTRING_SCRIPTS


def _term_pattern(term: str) -> re.Pattern[str]:
    escaped = re.escape(term)
    if char_script(term[0]) not in SUBSTRING_SCRIPTS:
        escaped = r"(?<!\w)" + escaped
    if char_script(term[-1]) not in SUBSTRING_SCRIPTS:
        escaped += r"(?!\w)"
    return re.compile(escaped, 0 if case_sensitive(term) else re.IGNORECASE)


@dataclass(frozen=True)
class GlossaryIndex:
    """A glossary prepared for matching many segments."""

    glossary: Glossary
    _by_word: dict[str, list[int]] = field(default_factory=dict, repr=False)
    _substring: list[int] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        for i, (term, _) in enumerate(self.glossary):
            first = _WORD.search(term)
            if _unspaced(term) or first is None:
                self._substring.append(i)
            else:
                self._by_word.setdefault(first.group(0).casefold(), []).append(i)

    def matches(self, text: str) -> Glossary:
        """The entries whose source term occurs in `text`, in glossary order."""
        if not self.glossary:
            return ()
        found: set[int] = set()
        folded = text.casefold()
        for i in self._substring:
            term = self.glossary[i][0]
            if (term in text if case_sensitive(term) else term.casefold() in folded) and _pattern(term).search(text):
                found.add(i)
        for word in {m.group(0).casefold() for m in _WORD.finditer(text)}:
            for i in self._by_word.get(word, ()):
                if i not in found and _pattern(self.glossary[i][0]).search(text):
                    found.add(i)
        return tuple(self.glossary[i] for i in sorted(found))


@functools.lru_cache(maxsize=4096)
def _pattern(term: str) -> re.Pattern[str]:
    return _term_pattern(term)


def matching_terms(text: str, glossary: Glossary) -> Glossary:
    """The entries of `glossary` whose source term occurs in `text` (see the module doc)."""
    return GlossaryIndex(glossary).matches(text)
