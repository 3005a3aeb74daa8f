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
        closed_loop: for each number N here, also run the prompts with N requests in flight,
            the next one submitted as each finishes (the arrival pattern of N server clients);
            empty: no such run.
    """

    num_requests: int = 2000
    prompt_len_min: int = 40
    prompt_len_max: int = 80
    output_len: int = 32
    batch1_requests: int = 20
    seed: int = 0
    closed_loop: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        for name in ("num_requests", "prompt_len_min", "output_len", "batch1_requests"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise InvalidInputError(f"{name} must be a positive integer, got {value!r}", field=name)
        if not isinstance(self.closed_loop, tuple) or not all(
                isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in self.closed_loop):
            raise InvalidInputError(f"closed_loop must be a tuple of positive integers, got {self.closed_loop!r}",
                                    field="closed_loop")
        if len(set(self.closed_loop)) != len(self.closed_loop):
            raise InvalidInputError(f"closed_loop lists a concurrency twice: {self.closed_loop!r}",
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

    def closed_loop_prompts(self, vocab_size: int, index: int = 0) -> list[list[int]]:
        """The `num_requests` prompts of closed-loop run `index` (of `closed_loop`), drawn apart
        from `prompts` and from the other closed-loop runs' (see above)."""
        return random_prompts(self.num_requests, self.prompt_len_min, self.prompt_len_max, vocab_size,
                              self.seed + 3 + index)

    def latency_prompts(self, vocab_size: int) -> list[list[int]]:
        """`batch1_requests` + 1 prompts (the first is the warm-up), drawn apart from `prompts`."""
        return random_prompts(self.batch1_requests + 1, self.prompt_len_min, self.prompt_len_max, vocab_size,
                              self.seed + 1)


def parse_concurrency_list(text: str) -> tuple[int, ...]:
    """'32,256' -> (32, 256): the numbers of requests in flight of the closed-loop runs; '0' or
    '' -> () (no closed-loop run)."""
    parts = [part.strip() for part in text.split(",") if part.strip()]
    try:
        values = tuple(int(part) for part in parts)
    except ValueError as exc:
        raise InvalidInputError(f"--closed-loop takes a comma list of positive integers, e.g. 32,256; got {text!r}",
                                field="closed_loop") from exc
    return () if values == (0,) else values


def random_prompts(count: int, len_min: int, len_max: int, vocab_size: int, seed: int) -> list[list[int]]:
    """`count` prompts of uniform random ids in [0, vocab_size), lengths uniform in [len_min, len_max]."""
    if vocab_size < 2:
        raise InvalidInputError(f"vocab_size must be >= 2, got {vocab_size}", field="vocab_size")
    rng = np.random.default_rng(seed)
    lengths = rng.integers(len_min, len_max + 1, size=count)
    return [rng.integers(0, vocab_size, size=int(n)).tolist() for n in lengths]
