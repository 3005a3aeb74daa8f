"""What one translate call asks for, validated once: `TranslateOptions` and its helpers.

Template choice per segment (the official templates do not combine):
an explicit `template` wins; otherwise a segment that contains a glossary source term uses
`terminology` (with only the terms it contains), else `context` when a context is given,
else `style` when a style is given, else `default`.

Sampling: the default is greedy with repetition_penalty 1.05 (the official value; greedy
decoding loops without it, docs/reference/models.md §8) and max_tokens scaled to the segment
(3 x source tokens + 64, at most MAX_NEW_TOKENS). "official" uses the family's sampling
with the same scaled limit; a SamplingParams (or a dict of its fields) is used as given.
The family's stop ids are always added.

Retry: a segment the quality guard flags gets one more request with the family's official
sampling (`retry_sampling`) unless `retry` is False; the issues are reported either way.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from hymt.engine.sampling import SamplingParams
from hymt.errors import InvalidInputError, UnsupportedTemplateError
from hymt.families import ModelFamily, canonical_template
from hymt.languages import Language, char_script, get_language
from hymt.translate.document import check_format

#: Upper bound of the scaled answer length (the official examples use 2048).
MAX_NEW_TOKENS = 2048
DEFAULT_REPETITION_PENALTY = 1.05
GREEDY = SamplingParams(repetition_penalty=DEFAULT_REPETITION_PENALTY)

# Scripts written without spaces between words: a glossary term matches as a substring there.
_UNSPACED = {"Han", "Hiragana", "Katakana", "Thai", "Khmer", "Myanmar", "Tibetan", "Hangul"}


@dataclass(frozen=True)
class TranslateOptions:
    """A validated translate request (everything but the text).

    Attributes:
        target: the language to translate into.
        source: the source language, or None to detect it per text.
        glossary: (source term, target term) pairs.
        context / style: inputs of the context and style templates.
        template: an explicit canonical template name, or None to choose per segment.
        format: "text", "markdown", "html" or "srt".
        sampling: explicit SamplingParams, or None for the scaled default.
        official: use the family's official sampling (scaled max_tokens).
        use_cache: read and write the translation cache.
        retry: send a segment the quality guard flags to the engine once more (official
            sampling, another seed). False: every segment costs exactly one engine request
            (benchmarks); the issues are still reported, and flagged answers not cached.
    """

    target: Language
    source: Language | None = None
    glossary: tuple[tuple[str, str], ...] = ()
    context: str | None = None
    style: str | None = None
    template: str | None = None
    format: str = "text"
    sampling: SamplingParams | None = None
    official: bool = False
    use_cache: bool = True
    retry: bool = True


def make_options(
    family: ModelFamily,
    to,
    source="auto",
    *,
    glossary=None,
    context=None,
    style=None,
    template=None,
    format="text",
    sampling=None,
    use_cache=True,
    retry=True,
) -> TranslateOptions:
    """Validate a call's arguments against `family` (raises hymt.errors on bad input)."""
    target = get_language(to, field="to")
    src = None if source in (None, "", "auto") else get_language(source, field="source")
    terms = parse_glossary(glossary)
    for name, value in (("context", context), ("style", style)):
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise InvalidInputError(f"{name} must be a non-empty string or None", field=name)
    chosen = None
    if template is not None:
        chosen = canonical_template(template)
        _require(family, chosen, "template")
    else:
        for needed, field in (("terminology", "glossary"), ("context", "context"), ("style", "style")):
            if {"glossary": terms, "context": context, "style": style}[field]:
                _require(family, needed, field)
    if not isinstance(retry, bool):
        raise InvalidInputError(f"retry must be True or False, got {retry!r}", field="retry")
    params, official = parse_sampling(family, sampling)
    return TranslateOptions(
        target=target, source=src, glossary=terms, context=context, style=style, template=chosen,
        format=check_format(format), sampling=params, official=official, use_cache=bool(use_cache),
        retry=retry,
    )


def _require(family: ModelFamily, template: str, field: str) -> None:
    if template not in family.templates:
        raise UnsupportedTemplateError(
            f"{family.name} has no {template!r} template (needed for {field}); "
            f"supported templates: {', '.join(sorted(family.templates))}",
            field=field,
        )


def parse_glossary(glossary) -> tuple[tuple[str, str], ...]:
    """A dict or an iterable of (source, target) pairs -> validated pairs."""
    if not glossary:
        return ()
    items = glossary.items() if isinstance(glossary, Mapping) else glossary
    if isinstance(items, str):
        raise InvalidInputError("glossary must be a dict or a list of (source, target) pairs", field="glossary")
    pairs = []
    for item in items:
        if (
            not isinstance(item, (tuple, list))
            or len(item) != 2
            or not all(isinstance(t, str) and t.strip() for t in item)
        ):
            raise InvalidInputError(
                f"glossary entries must be (source term, target term) pairs of non-empty strings, got {item!r}",
                field="glossary",
            )
        pairs.append((item[0].strip(), item[1].strip()))
    return tuple(dict.fromkeys(pairs))


def parse_sampling(family: ModelFamily, sampling) -> tuple[SamplingParams | None, bool]:
    """(explicit params or None, official?) from None | "greedy" | "official" | params | dict."""
    if sampling is None or sampling == "greedy":
        return None, False
    if sampling == "official":
        return None, True
    if isinstance(sampling, SamplingParams):
        return sampling, False
    if isinstance(sampling, Mapping):
        try:
            return SamplingParams(**sampling), False
        except TypeError as exc:
            raise InvalidInputError(f"bad sampling fields: {exc}", field="sampling") from exc
    raise InvalidInputError(
        f"sampling must be None, 'greedy', 'official', a SamplingParams or a dict, got {sampling!r}",
        field="sampling",
    )


def sampling_for(options: TranslateOptions, family: ModelFamily, source_tokens: Callable[[], int]) -> SamplingParams:
    """The SamplingParams of one segment's first attempt (stop ids added by the caller).

    `source_tokens()` counts the segment's tokens; it is called only when the scaled default
    needs it, since tokenizing is most of what a short request costs a busy server.
    """
    if options.sampling is not None:
        return options.sampling
    limit = min(MAX_NEW_TOKENS, 3 * source_tokens() + 64)
    base = family.default_sampling if options.official else GREEDY
    return base.replace(max_tokens=min(base.max_tokens, limit) if options.official else limit)


def retry_sampling(family: ModelFamily, first: SamplingParams, issues: tuple[str, ...], seed: int) -> SamplingParams:
    """The retry: the family's official sampling with another seed; a loop also gets a
    stronger repetition penalty."""
    params = family.default_sampling.replace(max_tokens=first.max_tokens, seed=seed)
    if {"repetition", "length"} & set(issues):
        params = params.replace(repetition_penalty=max(params.repetition_penalty, 1.1))
    return params


def _term_pattern(term: str) -> re.Pattern:
    escaped = re.escape(term)
    if char_script(term[0]) not in _UNSPACED:
        escaped = r"(?<!\w)" + escaped
    if char_script(term[-1]) not in _UNSPACED:
        escaped += r"(?!\w)"
    return re.compile(escaped, re.IGNORECASE)


def matching_terms(text: str, glossary: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """The glossary entries whose source term occurs in `text` (whole words where the
    script separates words; substring for Chinese, Japanese, Thai, ...)."""
    return tuple(pair for pair in glossary if _term_pattern(pair[0]).search(text))


def template_for(text: str, options: TranslateOptions) -> tuple[str, tuple[tuple[str, str], ...]]:
    """(template name, glossary entries to pass) for one segment; see module doc."""
    terms = matching_terms(text, options.glossary) if options.glossary else ()
    if options.template is not None:
        if options.template == "terminology" and not terms:
            return "default", ()
        return options.template, terms
    if terms:
        return "terminology", terms
    if options.context:
        return "context", ()
    if options.style:
        return "style", ()
    return "default", ()
