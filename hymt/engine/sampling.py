"""Per-request sampling parameters, shared by every engine backend."""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from hymt.errors import InvalidInputError


@dataclass(frozen=True)
class SamplingParams:
    """How one request picks its next tokens.

    Greedy (temperature 0) is the default: deterministic and cacheable. The order of
    operations is: repetition penalty -> temperature -> top-k -> top-p -> sample.

    Attributes:
        temperature: 0 means greedy (argmax); > 0 divides the logits before sampling.
        top_k: keep the k most likely tokens; 0 or -1 disables.
        top_p: keep the smallest set whose probability reaches top_p; 1.0 disables.
        repetition_penalty: HF-style penalty on tokens already in prompt or output (1.0 = off).
        max_tokens: the most tokens to generate; generation stops there with finish_reason "length".
        stop_token_ids: extra ids that end generation (the family's stop ids are added by the caller).
        seed: per-request seed; the same seed and inputs give the same tokens.
        ignore_eos: keep generating through stop ids until max_tokens (benchmarks force lengths).
    """

    temperature: float = 0.0
    top_k: int = 0
    top_p: float = 1.0
    repetition_penalty: float = 1.0
    max_tokens: int = 512
    stop_token_ids: tuple[int, ...] = field(default_factory=tuple)
    seed: int | None = None
    ignore_eos: bool = False

    def __post_init__(self) -> None:
        if self.temperature < 0:
            raise InvalidInputError(f"temperature must be >= 0, got {self.temperature}", field="temperature")
        if self.top_k < -1:
            raise InvalidInputError(f"top_k must be -1, 0 (off) or a positive int, got {self.top_k}", field="top_k")
        if not 0.0 < self.top_p <= 1.0:
            raise InvalidInputError(f"top_p must be in (0, 1], got {self.top_p}", field="top_p")
        if self.repetition_penalty <= 0:
            raise InvalidInputError(
                f"repetition_penalty must be > 0, got {self.repetition_penalty}", field="repetition_penalty"
            )
        if self.max_tokens < 1:
            raise InvalidInputError(f"max_tokens must be >= 1, got {self.max_tokens}", field="max_tokens")
        object.__setattr__(self, "stop_token_ids", tuple(int(t) for t in self.stop_token_ids))

    @property
    def greedy(self) -> bool:
        """True when the next token is always the argmax (temperature 0)."""
        return self.temperature == 0.0

    def effective_stop_ids(self, default_ids: Iterable[int]) -> tuple[int, ...]:
        """The ids that end this request: its own, then `default_ids` (the engine's), in that
        order without repeats; none at all under ignore_eos."""
        if self.ignore_eos:
            return ()
        return tuple(dict.fromkeys((*self.stop_token_ids, *default_ids)))

    def with_stop_ids(self, stop_ids: tuple[int, ...] | list[int]) -> SamplingParams:
        """A copy with `stop_ids` added to the stop set (order kept, duplicates dropped)."""
        merged = tuple(dict.fromkeys((*self.stop_token_ids, *stop_ids)))
        return dataclasses.replace(self, stop_token_ids=merged)

    def replace(self, **changes: Any) -> SamplingParams:
        """A copy with the given fields changed (validated again)."""
        return dataclasses.replace(self, **changes)
