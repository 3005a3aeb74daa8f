"""The retry policy: which verdicts are retried, with which sampling, and which answer stays."""
from __future__ import annotations

import pytest

from hymt.engine.sampling import SamplingParams
from hymt.errors import InvalidInputError
from hymt.families import get_family
from hymt.languages import get_language
from hymt.translate.detect import LanguageDetector
from hymt.translate.quality import QualityIssue, VerbatimReason, Verdict, assess_translation
from hymt.translate.retry_policy import (
    LENGTH_GROWTH,
    LOOP_REPETITION_PENALTY,
    keep_retry,
    retry_params,
    retry_seed,
    should_retry,
)

FAMILY = get_family("HY-MT1.5-1.8B")
OFFICIAL = FAMILY.default_sampling
FIRST = SamplingParams(repetition_penalty=1.05, max_tokens=100, stop_token_ids=(7, 9))  # greedy
EN, DE = get_language("en"), get_language("de")

CLEAN = Verdict()
VERBATIM = Verdict(verbatim=VerbatimReason.NAME)
SOFT_ECHO = Verdict((QualityIssue.ECHO,))
HARD_ECHO = Verdict((QualityIssue.ECHO, QualityIssue.WRONG_LANGUAGE))
CUT = Verdict((QualityIssue.LENGTH,))
LOOP = Verdict((QualityIssue.REPETITION, QualityIssue.LENGTH))


@pytest.mark.parametrize("verdict,retry", [
    (CLEAN, False), (VERBATIM, False), (SOFT_ECHO, False), (HARD_ECHO, True), (CUT, True), (LOOP, True),
    (Verdict((QualityIssue.EMPTY,)), True), (Verdict((QualityIssue.WRONG_SCRIPT,)), True),
])
def test_only_hard_issues_are_retried(verdict, retry):
    assert should_retry(verdict) is retry


@pytest.mark.parametrize("first,second,keep", [
    (HARD_ECHO, CLEAN, True),
    (CUT, SOFT_ECHO, True),  # a soft doubt is better than a cut answer
    (LOOP, CUT, False),  # still failed hard: the first stays
    (SOFT_ECHO, CLEAN, False),  # the first was never known to be wrong
    (CLEAN, CLEAN, False),
    (VERBATIM, CLEAN, False),
])
def test_retry_replaces_the_first_only_when_it_fixes_a_hard_failure(first, second, keep):
    assert keep_retry(first, second) is keep


def test_a_product_name_kept_verbatim_is_never_replaced_by_a_sampled_retry():
    name = "Microsoft Visual Studio Code"
    first = assess_translation(name, name, target=DE, source_lang=EN, detector=LanguageDetector())
    assert first.verbatim_ok and first.passed and not should_retry(first)
    worse = assess_translation(name, "Microsoft Visual-Studio-Code-Editor", target=DE, source_lang=EN)
    assert not keep_retry(first, worse)


def test_a_cut_answer_continues_with_the_same_sampling_and_a_larger_budget():
    params = retry_params(FAMILY, FIRST, CUT, seed=5)
    assert params == FIRST.replace(max_tokens=LENGTH_GROWTH * FIRST.max_tokens)
    assert params.greedy and params.stop_token_ids == (7, 9)


def test_the_larger_budget_stops_at_the_models_limit():
    assert retry_params(FAMILY, FIRST, CUT, seed=5, max_tokens_limit=150).max_tokens == 150


def test_a_cut_that_cannot_grow_is_retried_as_a_loop():
    params = retry_params(FAMILY, FIRST, CUT, seed=5, max_tokens_limit=100)
    assert params.max_tokens == 100 and params.temperature == OFFICIAL.temperature and params.seed == 5
    assert params.repetition_penalty == max(OFFICIAL.repetition_penalty, LOOP_REPETITION_PENALTY)


def test_a_loop_gets_official_sampling_a_stronger_penalty_and_no_larger_budget():
    params = retry_params(FAMILY, FIRST, LOOP, seed=11, max_tokens_limit=1000)
    assert (params.temperature, params.top_k, params.top_p) == (OFFICIAL.temperature, OFFICIAL.top_k, OFFICIAL.top_p)
    assert params.repetition_penalty == LOOP_REPETITION_PENALTY and params.max_tokens == 100
    assert params.seed == 11 and params.stop_token_ids == (7, 9)


def test_a_wrong_language_gets_official_sampling_with_its_own_penalty():
    params = retry_params(FAMILY, FIRST, HARD_ECHO, seed=3)
    assert params == OFFICIAL.replace(max_tokens=100, seed=3, stop_token_ids=(7, 9))


def test_a_cut_answer_in_the_wrong_language_is_resampled_with_the_larger_budget():
    verdict = Verdict((QualityIssue.WRONG_LANGUAGE, QualityIssue.LENGTH))
    params = retry_params(FAMILY, FIRST, verdict, seed=3, max_tokens_limit=1000)
    assert params.temperature == OFFICIAL.temperature and params.max_tokens == 200
    assert params.repetition_penalty == OFFICIAL.repetition_penalty


def test_ignore_eos_carries_over_to_the_retry():
    forced = FIRST.replace(ignore_eos=True)
    assert retry_params(FAMILY, forced, Verdict((QualityIssue.REPETITION,)), seed=1).ignore_eos


@pytest.mark.parametrize("verdict", [CLEAN, VERBATIM, SOFT_ECHO])
def test_retry_params_refuses_a_verdict_that_is_not_retried(verdict):
    with pytest.raises(InvalidInputError) as err:
        retry_params(FAMILY, FIRST, verdict, seed=1)
    assert err.value.field == "verdict" and "hard issue" in str(err.value)


def test_retry_params_refuses_a_limit_below_one():
    with pytest.raises(InvalidInputError) as err:
        retry_params(FAMILY, FIRST, CUT, seed=1, max_tokens_limit=0)
    assert err.value.field == "max_tokens_limit"


def test_retry_seed_is_stable_differs_from_the_first_and_between_segments():
    seeded = FIRST.replace(seed=42)
    assert retry_seed(seeded, "Hello.") == retry_seed(seeded, "Hello.") != 42
    assert retry_seed(seeded, "Hello.") != retry_seed(seeded, "Goodbye.")
    assert retry_seed(FIRST, "Hello.") != retry_seed(seeded, "Hello.")
