"""Chimera fusion: N sampled candidate translations of each text, then one fusion request.

Hunyuan-MT-Chimera-7B refines several candidate translations of a text into one (its fusion
template, docs/reference/models.md §7.3). `TranslateOptions(fusion=N)` asks for the whole
pipeline: the model translates each text N times with the official sampled decoding (seeds
0..N-1, the default template), then once more with the fusion template over those
candidates. The fusion prompt reads the whole text, so each text is one fusion request.
"""
from __future__ import annotations

from dataclasses import replace

from hymt.errors import InvalidInputError
from hymt.translate.request import TranslationRequest
from hymt.translate.result import TranslationResult
from hymt.translate.sampling_policy import Sampling


def candidate_requests(request: TranslationRequest) -> list[TranslationRequest]:
    """The N candidate passes: official sampling, one seed each, the default template."""
    return [replace(request, options=request.options.replace(
        fusion=0, template=None, sampling=Sampling(preset="official", seed=seed)))
        for seed in range(request.options.fusion)]


def fusion_request(request: TranslationRequest, candidates: list[TranslationResult]) -> TranslationRequest:
    """The fusion pass of one text over its candidates (the source is the one the candidates
    were translated from: given, or detected by the first pass)."""
    source = request.source or candidates[0].source
    if source is None:
        raise InvalidInputError("fusion needs the source language; it could not be detected", field="source")
    options = request.options.replace(fusion=0, template="fusion", candidates=tuple(c.text for c in candidates))
    return replace(request, source=source, options=options)


def fused_result(final: TranslationResult, candidates: list[TranslationResult]) -> TranslationResult:
    """The fusion answer, with the candidates' cost added to its token counts."""
    return replace(
        final,
        prompt_tokens=final.prompt_tokens + sum(c.prompt_tokens for c in candidates),
        completion_tokens=final.completion_tokens + sum(c.completion_tokens for c in candidates),
        elapsed_s=final.elapsed_s + max((c.elapsed_s for c in candidates), default=0.0),
    )
