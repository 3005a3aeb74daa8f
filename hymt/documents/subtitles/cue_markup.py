"""A cue's text as a unit: its inline markup as numbered tags around and between the text.

Each format reads a cue's text into `Text` and `Mark` tokens: `Text` is what the model reads,
a `Mark` is markup written back byte for byte. An opening mark and a closing mark of the same
`key` at the same nesting level become a pair `<sN>…</sN>` (italics around their words, so
that they follow the words wherever the translation puts them); every other mark is a void
tag `<sN/>` (a line break inside the cue, an unclosed `<v Speaker>`, a positioning override,
a drawing). Plain text goes through `UnitText` without placeholder families, so that text
looking like a numbered tag or a URL is still kept exactly.
"""
from __future__ import annotations

import enum
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from hymt.documents.inline_tags import TagMismatch, parse_tree, tag_kinds
from hymt.documents.placeholders import Syntax
from hymt.documents.unit_text import Literal, UnitText


class Role(enum.Enum):
    OPEN = "open"
    CLOSE = "close"
    VOID = "void"


@dataclass(frozen=True)
class Text:
    """Text the model reads."""

    text: str


@dataclass(frozen=True)
class Mark:
    """Markup kept exactly: `raw` as in the file; `key` names what an OPEN and a CLOSE mark
    must share to pair (a tag name); `breaks` marks a line break or a space, which separates
    the words on either side (other markup, like karaoke timing, may sit inside a word)."""

    raw: str
    role: Role = Role.VOID
    key: str = ""
    breaks: bool = False


Token = Text | Mark


@dataclass(frozen=True)
class CueText:
    """A cue's unit text, the markup behind each tag, whether it has a letter to translate
    outside its markup, and its words without markup (what a reader sees, on one line)."""

    text: str
    markup: Mapping[int, Literal]
    translatable: bool
    plain: str

    @property
    def tags_intact(self) -> bool:
        """Whether the text's tags are exactly the markup's: False when decoded text next to
        markup reads as a numbered tag of its own."""
        try:
            found = tag_kinds(parse_tree(self.text))
        except TagMismatch:
            return False
        return found == {number: not literal.close for number, literal in self.markup.items()}


def _pairs(tokens: Sequence[Token]) -> dict[int, int]:
    """{index of an OPEN mark: index of its CLOSE mark}. A close pairs with the innermost open
    mark of its key; the marks opened inside that one and still open stay unpaired, so pairs
    always nest."""
    stack: list[int] = []
    pairs: dict[int, int] = {}
    for index, token in enumerate(tokens):
        if not isinstance(token, Mark) or token.role is Role.VOID:
            continue
        if token.role is Role.OPEN:
            stack.append(index)
            continue
        for depth in range(len(stack) - 1, -1, -1):
            mark = tokens[stack[depth]]
            if isinstance(mark, Mark) and mark.key == token.key:
                pairs[stack[depth]] = index
                del stack[depth:]
                break
    return pairs


def build_cue_text(tokens: Sequence[Token]) -> CueText:
    """The unit text of a cue read as `tokens`."""
    pairs = _pairs(tokens)
    closes = set(pairs.values())
    unit: UnitText[Literal] = UnitText(Syntax(0))
    for index, token in enumerate(tokens):
        if isinstance(token, Text):
            unit.add_text(token.text)
        elif index in pairs:
            closing = tokens[pairs[index]]
            assert isinstance(closing, Mark)
            unit.open(Literal(token.raw, closing.raw))
        elif index in closes:
            unit.close()
        else:
            unit.void(Literal(token.raw))
    markup = {number: tag for number, tag in unit.markup.items() if isinstance(tag, Literal)}
    return CueText(unit.text, markup, unit.translatable, _plain(tokens))


def _plain(tokens: Sequence[Token]) -> str:
    words = "".join(
        token.text if isinstance(token, Text) else " " if token.breaks else "" for token in tokens
    )
    return " ".join(words.split())


def split_markup(pattern: re.Pattern[str], text: str) -> Iterator[tuple[str, re.Match[str] | None]]:
    """`text` in order as the stretches between `pattern`'s matches (paired with None) and
    the matches (paired with their match); empty stretches are left out."""
    position = 0
    for match in pattern.finditer(text):
        if match.start() > position:
            yield text[position : match.start()], None
        yield match.group(), match
        position = match.end()
    if position < len(text):
        yield text[position:], None
