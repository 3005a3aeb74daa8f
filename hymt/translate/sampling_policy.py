"""How a translation decodes: the caller's `Sampling` choice and the policy that turns it into
one segment's SamplingParams.

The default is greedy with the official repetition penalty 1.05 (greedy decoding loops without
it: docs/reference/models.md §8). `preset="official"` starts from the family's published
sampling. Fields the caller sets override the preset; the rest keep the preset's values.

Answer length: unless the caller sets `max_tokens`, each segment may produce 3 x its source
tokens + 64, at most MAX_NEW_TOKENS (a translation is rarely three times longer than its
source; a fixed limit either truncates long segments or lets a looping short one run on).
An operator's cap (`hymt serve --max-tokens`, `Translator(max_tokens=)`) bounds every
request, explicit ones too. The family's stop ids are added by the pipeline.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Literal

from hymt.engine.sampling import SamplingParams
from hymt.errors import InvalidInputError
from hymt.families import ModelFamily

#: Upper bound of the scaled answer length (the official examples use 2048).
MAX_NEW_TOKENS = 2048
DEFAULT_REPETITION_PENALTY = 1.05
#: The default decoding: deterministic, cacheable, and with the penalty that keeps greedy from looping.
GREEDY = SamplingParams(repetition_penalty=DEFAULT_REPETITION_PENALTY)
PRESETS = ("greedy", "official")
Preset = Literal["greedy", "official"]


@dataclass(frozen=True)
class Sampling:
    """A caller's sampling choice: a preset and the fields set explicitly (None: the preset's).

    Attributes:
        preset: "greedy" (GREEDY) or "official" (the family's published sampling).
        temperature / top_p / top_k / repetition_penalty / seed / ignore_eos /
            stop_token_ids: as in SamplingParams.
        max_tokens: the most tokens one segment's answer may have; None scales it to the
            segment (see the module doc).
    """

    preset: Preset = "greedy"
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    repetition_penalty: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    ignore_eos: bool | None = None
    stop_token_ids: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        if self.preset not in PRESETS:
            raise InvalidInputError(
                f"sampling preset must be one of {', '.join(PRESETS)}, got {self.preset!r}", field="sampling"
            )
        try:  # every set field is validated once, by SamplingParams itself
            GREEDY.replace(**self.explicit())
        except InvalidInputError as exc:
            raise InvalidInputError(str(exc), field=f"sampling.{exc.field}" if exc.field else "sampling") from None

    def explicit(self) -> dict[str, object]:
        """The fields the caller set."""
        return {f.name: getattr(self, f.name) for f in fields(self)
                if f.name != "preset" and getattr(self, f.name) is not None}

    @classmethod
    def parse(cls, value: object) -> Sampling:
        """A Sampling from None / "greedy" / "official" / a SamplingParams (every field
        explicit, as given) / a mapping of Sampling fields."""
        if value is None:
            return cls()
        if isinstance(value, Sampling):
            return value
        if isinstance(value, str) and value in PRESETS:
            return cls(preset=value)  # type: ignore[arg-type]
        if isinstance(value, SamplingParams):
            return cls(**{f.name: getattr(value, f.name) for f in fields(value)})
        if isinstance(value, Mapping):
            known = {f.name for f in fields(cls)}
            unknown = sorted(str(k) for k in value if k not in known)
            if unknown:
                raise InvalidInputError(
                    f"unknown sampling field(s) {', '.join(unknown)}; valid: {', '.join(sorted(known))}",
                    field=f"sampling.{unknown[0]}",
                )
            return cls(**{str(k): v for k, v in value.items()})
        raise InvalidInputError(
            f"sampling must be 'greedy', 'official', a SamplingParams or a mapping of its fields, got {value!r}",
            field="sampling",
        )


def scaled_limit(source_tokens: int) -> int:
    """The default answer budget of a segment of `source_tokens` tokens."""
    return min(MAX_NEW_TOKENS, 3 * source_tokens + 64)


def first_attempt(
    sampling: Sampling, family: ModelFamily, source_tokens: Callable[[], int], cap: int | None = None
) -> SamplingParams:
    """The SamplingParams of one segment's first request (stop ids added by the caller).

    `source_tokens()` counts the segment's tokens; it is called only when the scaled limit is
    needed, since tokenizing is most of what a short request costs a busy server.
    """
    base = GREEDY if sampling.preset == "greedy" else family.default_sampling
    explicit = sampling.explicit()
    if "max_tokens" not in explicit:
        limit = scaled_limit(source_tokens())
        explicit["max_tokens"] = min(base.max_tokens, limit) if sampling.preset == "official" else limit
    params = base.replace(**explicit)
    if cap is not None and params.max_tokens > cap:
        params = params.replace(max_tokens=cap)
    return params


def retry_sampling(family: ModelFamily, first: SamplingParams, issues: tuple[str, ...], seed: int) -> SamplingParams:
    """The retry: the family's official sampling with another seed; a loop also gets a
    stronger repetition penalty."""
    params = family.default_sampling.replace(max_tokens=first.max_tokens, seed=seed)
    if {"repetition", "length"} & set(issues):
        params = params.replace(repetition_penalty=max(params.repetition_penalty, 1.1))
    return params
