"""Sentences that run across cues: which cue continues the one before it, and the context
the pipeline sends with it.

A subtitle sentence is often cut over two or three cues ("I never thought" / "we would see
him again."). Each cue is still translated alone (cue count and timing must stay), but a cue
that continues a sentence gets the earlier cues of that sentence as `Unit.context`, so the
model reads the whole sentence and translates its part to fit.

A cue continues the previous cue when the previous one does not end a sentence (its last
character, past closing quotes and brackets, is no sentence-final punctuation, and it is not
a caption all in brackets such as "[DOOR SLAMS]"), or when it starts in lower case or with an
ellipsis. "Previous" means the previous unit of the same
`key`: the same style in ASS, where dialogue, signs and songs interleave.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

#: At most this many earlier cues form a cue's context (a sentence over four cues is rare; a
#: file without punctuation, song lyrics, would otherwise chain every cue).
MAX_CONTEXT_CUES = 3

#: Marks that end a sentence: Latin-style, then full-width CJK, Devanagari, Arabic, Urdu,
#: Khmer and Burmese ones.
SENTENCE_END = ".!?…" + "。！？｡．।॥؟۔។៕။‼⁇⁈⁉"
#: Closing quotes, brackets and music notes that may follow the end of a sentence.
CLOSERS = "\"'”’»」』）)]】〕》〉›♪♫"
#: Opening quotes and brackets before a cue's first word.
OPENERS = "\"'“‘«「『（([【〔《〈‹¿¡"
ELLIPSES = ("...", "…")


@dataclass(frozen=True)
class CueLine:
    """A cue's text without markup, and the key that says which cue comes before it."""

    text: str
    key: str = ""


def ends_sentence(text: str) -> bool:
    """Whether `text` ends a sentence; a caption all in brackets ("[DOOR SLAMS]") ends itself."""
    stripped = text.strip()
    if stripped[:1] in "[(" and stripped[-1:] in "])":
        return True
    core = stripped.rstrip(CLOSERS + " ")
    return bool(core) and core[-1] in SENTENCE_END


def starts_mid_sentence(text: str) -> bool:
    core = text.lstrip()
    if core.startswith(ELLIPSES):
        return True
    core = core.lstrip(OPENERS + " ")
    return bool(core) and core[0].islower()


def continues(previous: str, text: str) -> bool:
    """Whether a cue reading `text` goes on with the sentence of a cue reading `previous`."""
    return not ends_sentence(previous) or starts_mid_sentence(text)


def contexts(cues: Sequence[CueLine]) -> list[str]:
    """Each cue's context: the texts of the earlier cues of its sentence (at most
    MAX_CONTEXT_CUES, oldest first, joined by spaces), "" when it starts a sentence."""
    last_of_key: dict[str, int] = {}
    previous: list[int | None] = []
    for index, cue in enumerate(cues):
        previous.append(last_of_key.get(cue.key))
        last_of_key[cue.key] = index
    carries = [p is not None and continues(cues[p].text, cue.text) for p, cue in zip(previous, cues)]
    found: list[str] = []
    for index in range(len(cues)):
        texts: list[str] = []
        at: int | None = index
        while at is not None and carries[at] and len(texts) < MAX_CONTEXT_CUES:
            at = previous[at]
            assert at is not None
            texts.append(cues[at].text.strip())
        found.append(" ".join(reversed(texts)))
    return found
