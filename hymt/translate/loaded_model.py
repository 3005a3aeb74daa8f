"""LoadedModel: what the pipeline needs of the model: tokenizer, family, stop ids, limits."""
from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field

from hymt.checkpoint import Checkpoint
from hymt.families import ModelFamily

# Stands for the user turn while the chat format is split into what comes before and after
# it (private-use characters no template or user text carries).
_USER_TURN = "\ue000user-turn\ue001"


@dataclass(frozen=True)
class LoadedModel:
    """The model a Translator serves, as the pipeline sees it.

    Prompts are encoded in three parts: the chat format's text before and after the user turn
    with its special tokens, and the user turn (the official instruction and everything the
    user sent: text, glossary, context, candidates) as plain text, so a user who types
    `<|eos|>` never sends the control token.
    """

    model_id: str
    checkpoint: Checkpoint
    family: ModelFamily
    stop_token_ids: tuple[int, ...]
    max_model_len: int | None = None
    _chat_ends: list[tuple[str, str]] = field(default_factory=list, repr=False, compare=False)

    def encode(self, text: str) -> list[int]:
        """Token ids of user text (special-token strings stay text)."""
        return self.checkpoint.encode_text(text)

    def encode_prompt(self, user_turn: str) -> list[int]:
        """The token ids of one chat turn around `user_turn`."""
        before, after = self._chat_around()
        return self.checkpoint.encode(before) + self.checkpoint.encode_text(user_turn) + self.checkpoint.encode(after)

    def _chat_around(self) -> tuple[str, str]:
        if not self._chat_ends:
            rendered = self.family.render_chat(_USER_TURN, self.checkpoint)
            before, _, after = rendered.partition(_USER_TURN)
            self._chat_ends.append((before, after))
        return self._chat_ends[0]

    def decode(self, ids: Sequence[int]) -> str:
        return self.checkpoint.decode(list(ids), skip_special_tokens=True)

    @functools.cached_property
    def _count_cache(self) -> dict[str, int]:
        return {}

    def count_tokens(self, text: str) -> int:
        return len(self.checkpoint.encode_text(text))
