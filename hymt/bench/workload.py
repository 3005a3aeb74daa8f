"""The benchmark workload: random token-id prompts and a forced answer length.

Random ids keep the cost of a real model's prompts (prefill is content-blind) while never
sharing prefixes, so the prefix cache cannot flatter the figures; `ignore_eos` forces every
answer to exactly `output_len` tokens, which random weights would otherwise cut short.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hymt.engine.sampling import SamplingParams
from hymt.errors import InvalidInputError


@dataclass(frozen=True)
class Workload:
    """What `hymt bench` submits.

    Attributes:
        num_requests: requests of the offline throughput run.
        prompt_len_min / prompt_len_max: prompt lengths are uniform in this closed range.
        output_len: tokens every answer is forced to (ignore_eos).
        batch1_requests: single requests of the latency run (one warm-up request before them).
        seed: seed of the prompt generator (the same seed gives the same prompts).
        closed_loop: also run the prompts with this many requests in flight, the next one
            submitted as each finishes (the arrival pattern of that many server clients);
            0: no such run.
    """

    num_requests: int = 2000
    prompt_len_min: int = 40
    prompt_len_max: int = 80
    output_len: int = 32
    batch1_requests: int = 20
    seed: int = 0
    closed_loop: int = 0

    def __post_init__(self) -> None:
        for name in ("num_requests", "prompt_len_min", "output_len", "batch1_requests"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise InvalidInputError(f"{name} must be a positive integer, got {value!r}", field=name)
        if not isinstance(self.closed_loop, int) or self.closed_loop < 0:
            raise InvalidInputError(f"closed_loop must be an integer >= 0, got {self.closed_loop!r}",
                                    field="closed_loop")
        if self.prompt_len_max < self.prompt_len_min:
            raise InvalidInputError(
                f"prompt_len_max ({self.prompt_len_max}) must be >= prompt_len_min ({self.prompt_len_min})",
                field="prompt_len_max",
            )

    @property
    def sampling(self) -> SamplingParams:
        """Greedy, exactly `output_len` tokens."""
        return SamplingParams(max_tokens=self.output_len, ignore_eos=True)

    def prompts(self, vocab_size: int) -> list[list[int]]:
        """The throughput run's `num_requests` prompts."""
        return random_prompts(self.num_requests, self.prompt_len_min, self.prompt_len_max, vocab_size, self.seed)

    def warmup_prompts(self, vocab_size: int, count: int) -> list[list[int]]:
        """`count` untimed prompts, drawn apart from every timed set: the prefix cache keeps what
        it computed, and a timed prompt it had seen would skip its prefill."""
        return random_prompts(count, self.prompt_len_min, self.prompt_len_max, vocab_size, self.seed + 2)

    def closed_loop_prompts(self, vocab_size: int) -> list[list[int]]:
        """The closed-loop run's `num_requests` prompts, drawn apart from `prompts` (see above)."""
        return random_prompts(self.num_requests, self.prompt_len_min, self.prompt_len_max, vocab_size,
                              self.seed + 3)

    def latency_prompts(self, vocab_size: int) -> list[list[int]]:
        """`batch1_requests` + 1 prompts (the first is the warm-up), drawn apart from `prompts`."""
        return random_prompts(self.batch1_requests + 1, self.prompt_len_min, self.prompt_len_max, vocab_size,
                              self.seed + 1)


def random_prompts(count: int, len_min: int, len_max: int, vocab_size: int, seed: int) -> list[list[int]]:
    """`count` prompts of uniform random ids in [0, vocab_size), lengths uniform in [len_min, len_max]."""
    if vocab_size < 2:
        raise InvalidInputError(f"vocab_size must be >= 2, got {vocab_size}", field="vocab_size")
    rng = np.random.default_rng(seed)
    lengths = rng.integers(len_min, len_max + 1, size=count)
    return [rng.integers(0, vocab_size, size=int(n)).tolist() for n in lengths]
