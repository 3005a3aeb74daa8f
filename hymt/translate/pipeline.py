"""The translation pipeline, independent of how requests reach the engine.

`Pipeline.plan` takes parsed documents (hymt.documents: units with inline tags), detects the
source language, splits each unit into segments, looks segments up in the cache and renders
one prompt per remaining unique segment. `Pipeline.run` is a generator: it yields `Round`s
of engine requests and is sent their outputs, so one body of logic serves the blocking and
the asyncio drivers in translator.py. A round holds every request of the call: the whole
batch or document reaches the engine at once. A second round (the retries of answers that
failed a hard check, a broken inline tag included) follows only when the options allow it.

Every answer is cleaned, its tags checked against its source (inline_tags.check_answer),
judged by the quality guard and, when it passes, cached. An answer whose tags stay broken
keeps its plain translation with the source's markup around it (`fallback_tree`), and the
segment reports the `markup` issue.
"""
from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field

from hymt.documents.inline_tags import (
    TagMismatch,
    check_answer,
    fallback_tree,
    has_tags,
    join_trees,
    parse_tree,
    tagged_text,
)
from hymt.documents.inline_tags import plain_text as untagged
from hymt.documents.units import ParsedDocument, Tree
from hymt.engine.outputs import RequestOutput
from hymt.engine.sampling import SamplingParams
from hymt.families import PromptSpec, build_prompt
from hymt.languages import Language
from hymt.translate.cache import CacheKey, TranslationCache
from hymt.translate.cleanup import clean_output
from hymt.translate.detect import LanguageDetector
from hymt.translate.loaded_model import LoadedModel
from hymt.translate.progress import Progress
from hymt.translate.quality import QualityIssue, Verdict, assess_translation
from hymt.translate.request import TemplateChoice, TranslationRequest, template_for
from hymt.translate.result import Detection, Segment
from hymt.translate.retry_policy import keep_retry, retry_params, retry_seed, should_retry
from hymt.translate.sampling_policy import first_attempt
from hymt.translate.segmentation import unit_pieces
from hymt.translate.segmenter import TokenCounter

#: Characters of a document the language detector reads (the start decides).
DETECT_CHARS = 2000


@dataclass(frozen=True)
class Request:
    prompt_ids: list[int]
    params: SamplingParams


@dataclass(frozen=True)
class Round:
    """Requests to run together; `weights[i]` segments finish when request i does."""

    requests: list[Request]
    weights: list[int]


@dataclass
class Work:
    """One unique prompt and the segments (document, index) it answers."""

    source: str
    source_lang: Language | None
    target: Language
    key: CacheKey | None
    prompt_ids: list[int]
    params: SamplingParams
    users: list[tuple[int, int]] = field(default_factory=list)
    text: str = ""
    verdict: Verdict = field(default_factory=Verdict)
    retried: bool = False
    retry_reasons: tuple[str, ...] = ()
    prompt_tokens: int = 0
    completion_tokens: int = 0
    answer_tokens: int = 0


@dataclass
class Doc:
    """One document of a plan: its segments in order, and where each unit's segments end."""

    parsed: ParsedDocument
    segments: list[Segment]
    unit_ends: list[int]
    source: Language | None
    detection: Detection | None
    contexts: list[str]


@dataclass
class Plan:
    request: TranslationRequest
    docs: list[Doc]
    works: list[Work]
    started: float
    hits: int = 0

    @property
    def total(self) -> int:
        return sum(1 for d in self.docs for s in d.segments if s.translatable)


@dataclass(frozen=True)
class DocumentOutcome:
    """A translated document: the rendered file and what went into it."""

    data: bytes
    segments: tuple[Segment, ...]
    source: Language | None
    detection: Detection | None
    elapsed_s: float


class Pipeline:
    """Units -> segments -> prompts -> (engine) -> clean -> tags -> guard -> retry -> cache -> render."""

    def __init__(self, model: LoadedModel, *, cache: TranslationCache | None, detector: LanguageDetector,
                 max_segment_tokens: int, answer_cap: int | None = None) -> None:
        self.model, self.cache, self.detector = model, cache, detector
        self.max_segment_tokens = max_segment_tokens
        self.answer_cap = answer_cap

    # -- planning --------------------------------------------------------------------------

    def plan(self, documents: Sequence[ParsedDocument], request: TranslationRequest) -> Plan:
        plan = Plan(request, [], [], time.perf_counter())
        # One count per text for the whole plan: the segmenter, the cache key and the work's
        # sampling may each need the same segment's count.
        count: TokenCounter = functools.lru_cache(maxsize=None)(self.model.count_tokens)
        for parsed in documents:
            plan.docs.append(self._segment(parsed, request, count))
        keys = self._use_cache(plan, count)
        works: dict[tuple[tuple[int, ...], SamplingParams], Work] = {}
        for d, doc in enumerate(plan.docs):
            unit = 0
            for i, seg in enumerate(doc.segments):
                while i >= doc.unit_ends[unit]:
                    unit += 1
                if seg.translatable and not seg.cached:
                    work = self._work(seg.source, doc, request, works, count, keys.get((d, i)), doc.contexts[unit])
                    work.users.append((d, i))
        plan.works = list(works.values())
        return plan

    def _segment(self, parsed: ParsedDocument, request: TranslationRequest, count: TokenCounter) -> Doc:
        units = parsed.units
        source, detection = request.source, None
        if source is None:
            sample = " ".join(untagged(u.text) for u in units)[:DETECT_CHARS]
            detection = self.detector.detect(sample)
            source = detection.language
        segments: list[Segment] = []
        ends: list[int] = []
        whole = not request.options.split_sentences
        for unit in units:
            if whole and unit.split:
                unit = dataclasses.replace(unit, split=False)
            for piece in unit_pieces(unit, budget=self.max_segment_tokens, count=count, language=source):
                segments.append(Segment(piece.text, piece.text, piece.separator, piece.translatable))
            ends.append(len(segments))
        return Doc(parsed, segments, ends, source, detection, [u.context for u in units])

    def _choice(self, text: str, request: TranslationRequest, context: str) -> TemplateChoice:
        return template_for(text, request, self.model.family, tagged=has_tags(text), unit_context=context)

    def _first_params(self, text: str, request: TranslationRequest, count: TokenCounter) -> SamplingParams:
        return first_attempt(request.options.sampling, self.model.family, lambda: count(text), self.answer_cap)

    def _cache_key(self, text: str, source: Language | None, request: TranslationRequest, count: TokenCounter,
                   context: str) -> CacheKey | None:
        options = request.options
        if self.cache is None or not options.use_cache:
            return None
        params = self._first_params(text, request, count)
        if not params.greedy:
            return None
        choice = self._choice(text, request, context)
        extras = (
            [list(t) for t in choice.terms],
            choice.context if choice.name == "context" else None,
            options.style if choice.name == "style" else None,
            options.format,
            choice.format_type if choice.name == "structured" else None,
            list(options.preferences) if choice.name == "personalization" else None,
            list(options.candidates) if choice.name == "fusion" else None,
        )
        return CacheKey(self.model.model_id, self.model.family.name, source.code if source else None,
                        request.target.code, choice.name, extras, repr(params), text)

    def _use_cache(self, plan: Plan, count: TokenCounter) -> dict[tuple[int, int], CacheKey]:
        """Mark the segments the cache answers; returns the cache keys by (document, segment)
        index, for every segment that has one (translatable, cache on, greedy sampling)."""
        keys = {}
        for d, doc in enumerate(plan.docs):
            unit = 0
            for i, seg in enumerate(doc.segments):
                while i >= doc.unit_ends[unit]:
                    unit += 1
                if seg.translatable:
                    key = self._cache_key(seg.source, doc.source, plan.request, count, doc.contexts[unit])
                    if key is not None:
                        keys[(d, i)] = key
        if not keys or self.cache is None:
            return keys
        found = self.cache.get_many(list(keys.values()))
        for (d, i), key in keys.items():
            text = found.get(key.digest())
            if text is not None:
                seg = plan.docs[d].segments[i]
                plan.docs[d].segments[i] = Segment(seg.source, text, seg.separator_after, True, cached=True)
                plan.hits += 1
        return keys

    def _work(self, text: str, doc: Doc, request: TranslationRequest,
              works: dict[tuple[tuple[int, ...], SamplingParams], Work], count: TokenCounter,
              cache_key: CacheKey | None, context: str) -> Work:
        family, options = self.model.family, request.options
        choice = self._choice(text, request, context)
        spec = PromptSpec(
            text=text, target=request.target, source=doc.source, template=choice.name, glossary=choice.terms,
            context=choice.context if choice.name == "context" else None,
            style=options.style if choice.name == "style" else None,
            format_type=choice.format_type if choice.name == "structured" else None,
            preferences=options.preferences if choice.name == "personalization" else (),
            candidates=options.candidates if choice.name == "fusion" else (),
        )
        prompt_ids = self.model.encode_prompt(build_prompt(family, spec))
        params = self._first_params(text, request, count)
        if self.model.max_model_len and params.max_tokens + len(prompt_ids) > self.model.max_model_len:
            params = params.replace(max_tokens=max(1, self.model.max_model_len - len(prompt_ids)))
        params = params.with_stop_ids(self.model.stop_token_ids)
        dedupe = (tuple(prompt_ids), params)
        if dedupe not in works:
            works[dedupe] = Work(text, doc.source, request.target, cache_key, prompt_ids, params)
        return works[dedupe]

    # -- running ---------------------------------------------------------------------------

    def answer(self, work: Work, out: RequestOutput) -> tuple[str, Verdict]:
        """The kept text of an engine output (tags checked, or the fallback) and its verdict."""
        text = clean_output(self.model.decode(out.token_ids), work.source)
        markup_broken = False
        if has_tags(work.source):
            try:
                text = tagged_text(check_answer(text, work.source))
            except TagMismatch:
                text = tagged_text(fallback_tree(untagged(text).strip(), work.source))
                markup_broken = True
        verdict = assess_translation(
            untagged(work.source), untagged(text), target=work.target, source_lang=work.source_lang,
            finish_reason=out.finish_reason, ignore_eos=work.params.ignore_eos, detector=self.detector,
        )
        if markup_broken:
            verdict = Verdict((*verdict.issues, QualityIssue.MARKUP))
        return text, verdict

    def run(self, plan: Plan, progress: Progress) -> Generator[Round, list[RequestOutput], list[DocumentOutcome]]:
        progress.start(plan.total)
        progress.advance(plan.hits)
        works = plan.works
        outputs = yield Round([Request(w.prompt_ids, w.params) for w in works], [len(w.users) for w in works])
        retry: list[Work] = []
        for work, out in zip(works, outputs):
            work.text, work.verdict = self.answer(work, out)
            work.prompt_tokens, work.completion_tokens = len(out.prompt_token_ids), len(out.token_ids)
            work.answer_tokens = len(out.token_ids)
            if plan.request.options.retry and should_retry(work.verdict):
                retry.append(work)
        if retry:
            requests = [Request(w.prompt_ids, self.retry_params(w)) for w in retry]
            outputs = yield Round(requests, [0] * len(retry))
            for work, out in zip(retry, outputs):
                self._take_retry(work, out)
        self.store(works)
        return self.outcomes(plan)

    def store(self, works: Sequence[Work]) -> None:
        """Cache the answers that may be cached: first attempts that passed every check."""
        if self.cache is not None:
            self.cache.put_many([(w.key, w.text) for w in works if w.key and not w.retried and w.verdict.passed])

    def retry_params(self, work: Work) -> SamplingParams:
        limit = self.model.max_model_len - len(work.prompt_ids) if self.model.max_model_len else None
        params = retry_params(self.model.family, work.params, work.verdict, seed=retry_seed(work.params, work.source),
                              max_tokens_limit=limit)
        return params.with_stop_ids(self.model.stop_token_ids)

    def _take_retry(self, work: Work, out: RequestOutput) -> None:
        text, verdict = self.answer(work, out)
        work.retried, work.retry_reasons = True, tuple(work.verdict.issues)
        work.prompt_tokens += len(out.prompt_token_ids)
        work.completion_tokens += len(out.token_ids)
        if keep_retry(work.verdict, verdict):
            work.text, work.verdict, work.answer_tokens = text, verdict, len(out.token_ids)

    # -- results ---------------------------------------------------------------------------

    def settle(self, plan: Plan) -> None:
        """Write every work's answer into the segments it answers."""
        for work in plan.works:
            for n, (d, i) in enumerate(work.users):
                seg = plan.docs[d].segments[i]
                plan.docs[d].segments[i] = Segment(
                    seg.source, work.text, seg.separator_after, True, retried=work.retried,
                    retry_reasons=work.retry_reasons, issues=tuple(work.verdict.issues),
                    prompt_tokens=work.prompt_tokens if n == 0 else 0,
                    completion_tokens=work.completion_tokens if n == 0 else 0,
                    answer_tokens=work.answer_tokens if n == 0 else 0,
                )

    def outcomes(self, plan: Plan) -> list[DocumentOutcome]:
        self.settle(plan)
        elapsed = round(time.perf_counter() - plan.started, 6)
        target = plan.request.target.code
        return [DocumentOutcome(doc.parsed.render_for(unit_trees(doc), target), tuple(doc.segments), doc.source,
                                doc.detection, elapsed) for doc in plan.docs]


def unit_trees(doc: Doc) -> list[Tree]:
    """Each unit's translation as one tree, from its segments' texts and separators."""
    trees: list[Tree] = []
    start = 0
    for end in doc.unit_ends:
        trees.append(join_trees([(parse_tree(s.text), s.separator_after) for s in doc.segments[start:end]]))
        start = end
    return trees
