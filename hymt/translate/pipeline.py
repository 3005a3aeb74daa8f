"""The translation pipeline, independent of how requests reach the engine.

`Pipeline.plan` segments the texts, detects source languages, looks segments up in the
cache and renders one prompt per remaining unique segment. `Pipeline.run` is a generator:
it yields `Round`s of engine requests and is sent their outputs, so one body of logic
serves the blocking and the asyncio drivers in translator.py. A round holds every request
of the call: the whole batch or document reaches the engine at once. A second round (the
quality retry of the flagged segments) follows only when the options allow retries.
"""
from __future__ import annotations

import functools
import time
import zlib
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Protocol

from hymt.engine.outputs import RequestOutput
from hymt.engine.sampling import SamplingParams
from hymt.errors import InvalidInputError
from hymt.families import ModelFamily, PromptSpec, build_prompt
from hymt.languages import Language
from hymt.translate.cache import CacheKey, TranslationCache
from hymt.translate.cleanup import clean_output
from hymt.translate.detect import LanguageDetector
from hymt.translate.document import reassemble, segment_document, whole_text_segments
from hymt.translate.request import WHOLE_TEXT_TEMPLATES, TranslationRequest, template_for
from hymt.translate.sampling_policy import first_attempt, retry_sampling
from hymt.translate.quality import check_translation
from hymt.translate.result import Detection, Segment, TranslationResult
from hymt.translate.segmenter import TokenCounter

# Worse answers score higher; a retry is kept only when it scores lower than the first.
_SEVERITY = {"empty": 4, "repetition": 3, "length": 2, "wrong_script": 2, "echo": 1}


@dataclass(frozen=True)
class LoadedModel:
    """What the pipeline needs of the model: tokenizer, family, stop ids, limits."""

    model_id: str
    checkpoint: object  # hymt.checkpoint.Checkpoint (encode/decode)
    family: ModelFamily
    stop_token_ids: tuple[int, ...]
    max_model_len: int | None = None

    def encode(self, text: str) -> list[int]:
        return self.checkpoint.encode(text)

    def decode(self, ids: list[int]) -> str:
        return self.checkpoint.decode(ids, skip_special_tokens=True)

    def count_tokens(self, text: str) -> int:
        return len(self.checkpoint.encode(text))


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
    """One unique prompt and the segments (doc, index) it answers."""

    source: str
    source_lang: Language | None
    target: Language
    key: CacheKey | None
    prompt_ids: list[int]
    params: SamplingParams
    users: list[tuple[int, int]] = field(default_factory=list)
    text: str = ""
    issues: tuple[str, ...] = ()
    retried: bool = False
    retry_reasons: tuple[str, ...] = ()
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class Doc:
    segments: list[Segment]
    source: Language | None
    detection: Detection | None


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


class ProgressBar(Protocol):
    """What Progress drives of a tqdm-like bar."""

    total: int | float | None

    def update(self, n: int) -> object: ...

    def refresh(self) -> object: ...


ProgressTarget = Callable[[int, int], object] | ProgressBar | None


class Progress:
    """Reports (done, total) to a callable, or drives a tqdm-like bar (`total`, `update`)."""

    def __init__(self, target: ProgressTarget) -> None:
        self.target, self.done, self.total = target, 0, 0

    def start(self, total: int) -> None:
        self.total = total
        target = self.target
        if target is None:
            return
        if callable(target):
            target(0, total)
        else:
            target.total = total
            target.refresh()

    def advance(self, n: int) -> None:
        target = self.target
        if n <= 0 or target is None:
            return
        self.done += n
        if callable(target):
            target(self.done, self.total)
        else:
            target.update(n)


def check_text(text: object, field: str = "text") -> str:
    if not isinstance(text, str):
        raise InvalidInputError(f"{field} must be a string, got {type(text).__name__}", field=field)
    if not text.strip():
        raise InvalidInputError(f"{field} must not be empty", field=field)
    return text


class Pipeline:
    """Segment -> prompt -> (engine) -> clean -> check -> retry -> cache -> reassemble."""

    def __init__(
        self,
        model: LoadedModel,
        *,
        cache: TranslationCache | None,
        detector: LanguageDetector,
        max_segment_tokens: int,
        answer_cap: int | None = None,
    ) -> None:
        self.model, self.cache, self.detector = model, cache, detector
        self.max_segment_tokens = max_segment_tokens
        self.answer_cap = answer_cap

    # -- planning --------------------------------------------------------------------------

    def plan(self, texts: list[str], request: TranslationRequest) -> Plan:
        options = request.options
        plan = Plan(request, [], [], time.perf_counter())
        # One count per text for the whole plan: the segmenter, the cache key and the work's
        # sampling may each need the same segment's count.
        count = functools.lru_cache(maxsize=None)(self.model.count_tokens)
        for text in texts:
            if options.template in WHOLE_TEXT_TEMPLATES:
                segments = whole_text_segments(text)
            else:
                segments = segment_document(text, options.format, max_tokens=self.max_segment_tokens,
                                            count_tokens=count)
            source, detection = request.source, None
            if source is None:
                detection = self.detector.detect(" ".join(s.source for s in segments if s.translatable))
                source = detection.language
            plan.docs.append(Doc(segments, source, detection))
        keys = self._use_cache(plan, count)
        works: dict[tuple, Work] = {}
        for d, doc in enumerate(plan.docs):
            for i, seg in enumerate(doc.segments):
                if seg.translatable and not seg.cached:
                    work = self._work(seg.source, doc.source, request, works, count, keys.get((d, i)))
                    work.users.append((d, i))
        plan.works = list(works.values())
        return plan

    def _cache_key(self, text: str, source: Language | None, request: TranslationRequest,
                   count: TokenCounter) -> CacheKey | None:
        options = request.options
        if self.cache is None or not options.use_cache:
            return None
        template, terms = template_for(text, request)
        params = self._first_params(text, request, count)
        if not params.greedy:
            return None
        extras = (
            [list(t) for t in terms],
            options.context if template == "context" else None,
            options.style if template == "style" else None,
            options.format,
            options.format_type if template == "structured" else None,
            list(options.preferences) if template == "personalization" else None,
            list(options.candidates) if template == "fusion" else None,
        )
        return CacheKey(
            self.model.model_id, self.model.family.name, source.code if source else None, request.target.code,
            template, extras, repr(params), text,
        )

    def _use_cache(self, plan: Plan, count: TokenCounter) -> dict[tuple[int, int], CacheKey]:
        """Mark the segments the cache answers; returns the cache keys by (document, segment)
        index, for every segment that has one (translatable, cache on, greedy sampling)."""
        keys = {}
        for d, doc in enumerate(plan.docs):
            for i, seg in enumerate(doc.segments):
                key = self._cache_key(seg.source, doc.source, plan.request, count) if seg.translatable else None
                if key is not None:
                    keys[(d, i)] = key
        if not keys:
            return keys
        found = self.cache.get_many(list(keys.values()))
        for (d, i), key in keys.items():
            text = found.get(key.digest())
            if text is not None:
                seg = plan.docs[d].segments[i]
                plan.docs[d].segments[i] = Segment(seg.source, text, seg.separator_after, True, cached=True)
                plan.hits += 1
        return keys

    def _first_params(self, text: str, request: TranslationRequest, count: TokenCounter) -> SamplingParams:
        return first_attempt(request.options.sampling, self.model.family, lambda: count(text), self.answer_cap)

    def _work(self, text: str, source: Language | None, request: TranslationRequest, works: dict,
              count: TokenCounter, cache_key: CacheKey | None) -> Work:
        family, options = self.model.family, request.options
        template, terms = template_for(text, request)
        spec = PromptSpec(
            text=text, target=request.target, source=source, template=template, glossary=terms,
            context=options.context if template == "context" else None,
            style=options.style if template == "style" else None,
            format_type=options.format_type if template == "structured" else None,
            preferences=options.preferences if template == "personalization" else (),
            candidates=options.candidates if template == "fusion" else (),
        )
        prompt_ids = self.model.encode(family.render_chat(build_prompt(family, spec), self.model.checkpoint))
        params = self._first_params(text, request, count)
        if self.model.max_model_len and params.max_tokens + len(prompt_ids) > self.model.max_model_len:
            params = params.replace(max_tokens=max(1, self.model.max_model_len - len(prompt_ids)))
        params = params.with_stop_ids(self.model.stop_token_ids)
        dedupe = (tuple(prompt_ids), params)
        if dedupe not in works:
            works[dedupe] = Work(text, source, request.target, cache_key, prompt_ids, params)
        return works[dedupe]

    # -- running ---------------------------------------------------------------------------

    def answer(self, work: Work, out: RequestOutput) -> tuple[str, tuple[str, ...]]:
        """The cleaned text of an engine output and its quality issues."""
        text = clean_output(self.model.decode(list(out.token_ids)), work.source)
        issues = check_translation(
            work.source, text, target=work.target, source_lang=work.source_lang, finish_reason=out.finish_reason,
            ignore_eos=work.params.ignore_eos,
        )
        return text, issues

    def run(self, plan: Plan, progress: Progress) -> Generator[Round, list[RequestOutput], list[TranslationResult]]:
        progress.start(plan.total)
        progress.advance(plan.hits)
        works = plan.works
        outputs = yield Round([Request(w.prompt_ids, w.params) for w in works], [len(w.users) for w in works])
        retry: list[Work] = []
        for work, out in zip(works, outputs):
            work.text, work.issues = self.answer(work, out)
            work.prompt_tokens, work.completion_tokens = len(out.prompt_token_ids), len(out.token_ids)
            if work.issues and plan.request.options.retry:
                retry.append(work)
        if retry:
            requests = [Request(w.prompt_ids, self._retry_params(w)) for w in retry]
            outputs = yield Round(requests, [0] * len(retry))
            for work, out in zip(retry, outputs):
                self._take_retry(work, out)
        if self.cache is not None:
            self.cache.put_many([(w.key, w.text) for w in works if w.key and not w.retried and not w.issues])
        return self.results(plan)

    def _retry_params(self, work: Work) -> SamplingParams:
        seed = (work.params.seed or 0) + 1 + zlib.crc32(work.source.encode()) % 65536
        return retry_sampling(self.model.family, work.params, work.issues, seed).with_stop_ids(self.model.stop_token_ids)

    def _take_retry(self, work: Work, out: RequestOutput) -> None:
        text, issues = self.answer(work, out)
        work.retried, work.retry_reasons = True, work.issues
        work.prompt_tokens += len(out.prompt_token_ids)
        work.completion_tokens += len(out.token_ids)
        if _score(issues) < _score(work.issues):
            work.text, work.issues = text, issues

    def results(self, plan: Plan) -> list[TranslationResult]:
        for work in plan.works:
            for n, (d, i) in enumerate(work.users):
                seg = plan.docs[d].segments[i]
                plan.docs[d].segments[i] = Segment(
                    seg.source, work.text, seg.separator_after, True, retried=work.retried,
                    retry_reasons=work.retry_reasons, issues=work.issues,
                    prompt_tokens=work.prompt_tokens if n == 0 else 0,
                    completion_tokens=work.completion_tokens if n == 0 else 0,
                )
        elapsed = time.perf_counter() - plan.started
        return [_result(doc, plan.request.target, elapsed) for doc in plan.docs]


def _score(issues: tuple[str, ...]) -> int:
    return sum(_SEVERITY.get(i, 1) for i in issues)


def _result(doc: Doc, target: Language, elapsed: float) -> TranslationResult:
    translated = [s for s in doc.segments if s.translatable]
    issues = tuple(dict.fromkeys(i for s in doc.segments for i in s.issues))
    return TranslationResult(
        text=reassemble(doc.segments),
        source=doc.source,
        target=target,
        segments=tuple(doc.segments),
        prompt_tokens=sum(s.prompt_tokens for s in doc.segments),
        completion_tokens=sum(s.completion_tokens for s in doc.segments),
        elapsed_s=round(elapsed, 6),
        cached=bool(translated) and all(s.cached for s in translated),
        retried=any(s.retried for s in doc.segments),
        issues=issues,
        detection=doc.detection,
    )
