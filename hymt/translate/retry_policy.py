"""What to do about a segment the quality guard judged: whether to ask again, with which
sampling, and which of the two answers to keep. Pure functions over quality.Verdict and
SamplingParams.

How a pipeline uses them, per segment:

    first = assess_translation(source, text, target=..., source_lang=..., finish_reason=...,
                               ignore_eos=params.ignore_eos, detector=detector)
    if retry_allowed and should_retry(first):
        params2 = retry_params(family, params, first, seed=retry_seed(params, source),
                               max_tokens_limit=max_model_len - len(prompt_ids))
        ... run it, assess its answer -> second ...
        if keep_retry(first, second): keep the second answer and verdict
    cache the answer only when it is the first, greedy, and its verdict `passed`
    (a verbatim answer passes: it is cached like any right answer)

The rules:
- Only a hard issue is worth a second request. A soft one (an echo nothing proves wrong) is
  reported, not retried: the retry samples, and on a right answer that only makes it worse.
- A cut answer with no other issue is run again with the same sampling and a larger budget
  (LENGTH_GROWTH x, up to the model's limit): a long translation was cut, not a bad one, and
  the same decoding continues it. When the budget cannot grow, the cut is most likely a loop
  and is treated as one.
- Any other hard issue: the family's official sampling with a new seed; a loop (or a cut that
  cannot grow) also gets a repetition penalty of at least LOOP_REPETITION_PENALTY.
- The retry replaces the first answer only when the first failed hard and the retry does not.
"""
from __future__ import annotations

import zlib

from hymt.engine.sampling import SamplingParams
from hymt.errors import InvalidInputError
from hymt.families import ModelFamily
from hymt.translate.quality import QualityIssue, Verdict

#: A cut answer's retry gets this many times the first budget (up to the model's limit).
LENGTH_GROWTH = 2
#: The least repetition penalty of a retry after a loop (the official values are 1.0-1.05).
LOOP_REPETITION_PENALTY = 1.1


def should_retry(verdict: Verdict) -> bool:
    """Ask the engine again: the first answer failed a hard check."""
    return verdict.hard


def keep_retry(first: Verdict, retry: Verdict) -> bool:
    """Keep the retry's answer instead of the first: only when the first failed hard and the
    retry did not (a soft issue left is still better than a hard one)."""
    return first.hard and not retry.hard


def retry_seed(first: SamplingParams, source: str) -> int:
    """A seed for the retry that differs from the first request's and between segments, and
    is the same on every run (so a retried document translates the same way twice)."""
    return (first.seed or 0) + 1 + zlib.crc32(source.encode()) % 65536


def retry_params(
    family: ModelFamily,
    first: SamplingParams,
    verdict: Verdict,
    *,
    seed: int,
    max_tokens_limit: int | None = None,
) -> SamplingParams:
    """The SamplingParams of the retry of an answer judged `verdict` (which must be hard).

    Args:
        family: its `default_sampling` is the official sampling of a retry.
        first: the first request's params; its stop ids and ignore_eos carry over.
        verdict: the first answer's verdict; should_retry(verdict) must hold.
        seed: the retry's seed (retry_seed).
        max_tokens_limit: the most tokens the model can still generate after this prompt
            (max_model_len - prompt tokens); None: no limit beyond LENGTH_GROWTH.
    """
    if not verdict.hard:
        found_issues = ", ".join(verdict.issues) or "none"
        raise InvalidInputError(f"only a verdict with a hard issue is retried, got {found_issues}", field="verdict")
    found = set(verdict.issues)
    if max_tokens_limit is not None and max_tokens_limit < 1:
        raise InvalidInputError(f"max_tokens_limit must be >= 1 or None, got {max_tokens_limit}",
                                field="max_tokens_limit")
    budget = first.max_tokens
    if QualityIssue.LENGTH in found and QualityIssue.REPETITION not in found:
        budget = first.max_tokens * LENGTH_GROWTH
        if max_tokens_limit is not None:
            budget = max(first.max_tokens, min(budget, max_tokens_limit))
    grown = budget > first.max_tokens
    if found == {QualityIssue.LENGTH} and grown:
        return first.replace(max_tokens=budget)
    params = family.default_sampling.replace(max_tokens=budget, seed=seed, ignore_eos=first.ignore_eos)
    if QualityIssue.REPETITION in found or (QualityIssue.LENGTH in found and not grown):
        params = params.replace(repetition_penalty=max(params.repetition_penalty, LOOP_REPETITION_PENALTY))
    return params.with_stop_ids(first.stop_token_ids)

