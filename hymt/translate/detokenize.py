"""Token ids to text as they arrive, never splitting a character.

A byte-level tokenizer can end a step in the middle of a UTF-8 character; the decoded text
then ends in U+FFFD until its other bytes arrive. Nothing is emitted while that is so.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence


class IncrementalDecoder:
    """Accumulates token ids and hands out the text they add, whole characters only."""

    def __init__(self, decode: Callable[[list[int]], str]) -> None:
        self._decode = decode
        self.ids: list[int] = []
        self.text = ""  # what has been handed out

    def push(self, new_ids: Sequence[int], *, final: bool = False) -> str:
        """The text `new_ids` add (may be ""); `final` flushes an incomplete tail as is."""
        self.ids.extend(new_ids)
        decoded = self._decode(self.ids)
        if decoded.endswith("\ufffd") and not final:
            return ""
        if len(decoded) > len(self.text) and decoded.startswith(self.text):
            piece, self.text = decoded[len(self.text):], decoded
            return piece
        return ""
