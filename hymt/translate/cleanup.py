"""Output cleanup: what a model answer may carry that is not the translation.

- leaked special tokens: any `<｜...｜>` (1.8B vocabularies, full-width bar) or `<|...|>`
  (7B vocabularies) text, left when a stop id is missing or decoding kept specials, unless
  the source itself contains that text (then it is the user's text, translated as such);
- the `<target>...</target>` wrapper of the formatted template (the `<sN>` tags stay);
- `<think>...</think>` blocks (Hy-MT2-30B-A3B), and an unclosed `<think>` that never ended;
- control characters other than tab and line breaks, unless the source has them (no text
  means them, and XML documents cannot hold them);
- surrounding whitespace the source did not have.

`clean_output` is prefix-stable for streaming: `StreamCleaner` applies the same rules to a
growing text and holds back only what a later token could still change.
"""
from __future__ import annotations

import re

_SPECIAL = re.compile(r"<｜[^<>｜]{0,64}｜>|<\|[^<>|]{0,64}\|>")
_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.S)
_TARGET = re.compile(r"</?target>")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# A tail that could still grow into one of the patterns above ("<", "<｜hy_", "<thi", ...).
_OPEN_TAIL = re.compile(r"<[^<>]{0,70}$")


def clean_output(text: str, source: str = "") -> str:
    """The translation inside a raw model answer (see module doc)."""
    text = _THINK.sub("", text)
    text = _strip_specials(text, source)
    text = _TARGET.sub("", text)
    return _match_surrounding_space(text, source)


def _strip_specials(text: str, source: str) -> str:
    text = _SPECIAL.sub(lambda m: m.group(0) if m.group(0) in source else "", text)
    return _CONTROL.sub(lambda m: m.group(0) if m.group(0) in source else "", text)


def _match_surrounding_space(text: str, source: str) -> str:
    """Strip leading/trailing whitespace unless the source has some there too."""
    if not source[:1].isspace():
        text = text.lstrip()
    if not source[-1:].isspace():
        text = text.rstrip()
    return text


class StreamCleaner:
    """Incremental `clean_output`: feed the raw text so far, get the new clean text.

    The pieces returned by `feed` and `finish` join to `clean_output(raw, source)`: a suffix
    that may still become a tag, and trailing whitespace, are held back until they are known.
    """

    def __init__(self, source: str = "") -> None:
        self.source = source
        self.emitted = ""

    def feed(self, raw: str) -> str:
        held = _OPEN_TAIL.search(raw)
        stable = raw[: held.start()] if held else raw
        if "<think>" in stable and "</think>" not in stable[stable.rindex("<think>") :]:
            stable = stable[: stable.rindex("<think>")]  # an open think block: wait for its end
        clean = _THINK.sub("", stable)
        clean = _strip_specials(clean, self.source)
        clean = _TARGET.sub("", clean)
        if not self.source[:1].isspace():
            clean = clean.lstrip()
        clean = clean.rstrip()  # trailing whitespace may be the end of the answer
        return self._advance(clean)

    def finish(self, raw: str) -> str:
        return self._advance(clean_output(raw, self.source))

    def _advance(self, clean: str) -> str:
        if not clean.startswith(self.emitted) or len(clean) <= len(self.emitted):
            return ""
        piece = clean[len(self.emitted) :]
        self.emitted = clean
        return piece
