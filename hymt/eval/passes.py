"""One pass: every sentence of a corpus through `Translator.translate_batch`, chunk by chunk,
each finished chunk appended to the pass's work file (chunk_store.py) and skipped when a run
starts again.

A fusion pass (Chimera) gives each sentence its own candidates, so each sentence is its own
call; a chunk's calls go to the engine together (asyncio), as one batch would.
"""
from __future__ import annotations

import asyncio
import hashlib
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from hymt.eval.chunk_store import DEFAULT_CHUNK_SIZE, ChunkRecord, ChunkStore
from hymt.eval.corpus import Corpus
from hymt.translate.options import TranslateOptions
from hymt.translate.result import TranslationResult

if TYPE_CHECKING:
    from hymt.translate.translator import Translator


@dataclass(frozen=True)
class PassSpec:
    """What one pass translates with.

    Attributes:
        label: its name in the report ("bf16", "int4", "plain", "candidate 2", "fusion").
        scheme: the quantization scheme of the model it runs on.
        options: the translate options of every sentence.
        candidates: per sentence, the candidate translations the fusion template refines
            (fusion passes only; a sentence with none is left empty, without a request).
    """

    label: str
    scheme: str
    options: TranslateOptions
    candidates: tuple[tuple[str, ...], ...] | None = None

    def key_parts(self) -> dict[str, object]:
        """What the pass's outputs depend on besides the model and the data."""
        parts: dict[str, object] = {"scheme": self.scheme, "options": self.options.to_dict()}
        if self.candidates is not None:
            blob = "\x1e".join("\x1f".join(c) for c in self.candidates).encode("utf-8")
            parts["candidates"] = hashlib.sha256(blob).hexdigest()
        return parts


@dataclass(frozen=True)
class PassStats:
    """What a pass (or several, added up) cost.

    Attributes:
        sentences: sentences translated.
        requests: engine requests (quality-guard retries included).
        prompt_tokens / completion_tokens: tokens the engine computed.
        wall_s: wall time of the translate calls (loading excluded; chunks from an earlier
            run count with the time they took then).
        chunks / resumed_chunks: chunks in all, and those read back from the work file.
        issues: quality-guard issue codes left on the outputs, with counts.
    """

    sentences: int = 0
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    wall_s: float = 0.0
    chunks: int = 0
    resumed_chunks: int = 0
    issues: dict[str, int] = field(default_factory=dict)

    @property
    def tokens_per_s(self) -> float | None:
        """Completion tokens over wall time."""
        return self.completion_tokens / self.wall_s if self.wall_s > 0 else None

    def plus(self, other: PassStats) -> PassStats:
        issues = Counter(self.issues)
        issues.update(other.issues)
        return PassStats(self.sentences + other.sentences, self.requests + other.requests,
                         self.prompt_tokens + other.prompt_tokens, self.completion_tokens + other.completion_tokens,
                         self.wall_s + other.wall_s, self.chunks + other.chunks,
                         self.resumed_chunks + other.resumed_chunks, dict(issues))

    def to_dict(self) -> dict[str, object]:
        tps = self.tokens_per_s
        return {"sentences": self.sentences, "requests": self.requests, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "wall_s": round(self.wall_s, 4),
                "tokens_per_s": round(tps, 2) if tps is not None else None, "chunks": self.chunks,
                "resumed_chunks": self.resumed_chunks, "issues": dict(self.issues)}


@dataclass(frozen=True)
class PassResult:
    """A finished pass: its outputs (one line per sentence), costs and work file."""

    spec: PassSpec
    outputs: tuple[str, ...]
    stats: PassStats
    work_file: Path


def run_pass(spec: PassSpec, corpus: Corpus, store: ChunkStore, translator: Callable[[], Translator], *,
             chunk_size: int = DEFAULT_CHUNK_SIZE, progress: bool = True,
             after_chunk: Callable[[], None] = lambda: None) -> PassResult:
    """Translate `corpus` with `spec`, skipping the chunks `store` already holds.

    `translator()` gives the model (opened on the first call, so a fully resumed pass loads
    nothing); `after_chunk` runs after each translated chunk (memory sampling).
    """
    from tqdm import tqdm

    records: list[ChunkRecord] = []
    resumed = 0
    starts = range(0, len(corpus), chunk_size)
    done = {s: store.get(s, len(corpus.sources[s:s + chunk_size])) for s in starts}
    initial = sum(len(r.outputs) for r in done.values() if r is not None)
    with tqdm(total=len(corpus), initial=initial, desc=spec.label, unit="sent", leave=True, file=sys.stderr,
              disable=not progress, dynamic_ncols=True) as bar:
        for start in starts:
            record = done[start]
            if record is not None:
                resumed += 1
            else:
                record = _translate_chunk(spec, corpus, start, chunk_size, translator())
                store.append(record)
                after_chunk()
                bar.update(len(record.outputs))
            records.append(record)
    outputs = tuple(text for r in records for text in r.outputs)
    return PassResult(spec, outputs, _stats(records, resumed), store.path)


def _stats(records: Sequence[ChunkRecord], resumed: int) -> PassStats:
    issues: Counter[str] = Counter()
    for r in records:
        issues.update(r.issues)
    return PassStats(sum(len(r.outputs) for r in records), sum(r.requests for r in records),
                     sum(r.prompt_tokens for r in records), sum(r.completion_tokens for r in records),
                     sum(r.elapsed_s for r in records), len(records), resumed, dict(issues))


def _translate_chunk(spec: PassSpec, corpus: Corpus, start: int, size: int, translator: Translator) -> ChunkRecord:
    texts = list(corpus.sources[start:start + size])
    t0 = time.perf_counter()
    if spec.candidates is None:
        results: list[TranslationResult | None] = list(
            translator.translate_batch(texts, corpus.target, corpus.source, options=spec.options))
    else:
        candidates = spec.candidates[start:start + size]
        results = asyncio.run(_fuse(translator, texts, candidates, corpus, spec.options))
    elapsed = time.perf_counter() - t0
    issues: Counter[str] = Counter(code for r in results if r is not None for code in r.issues)
    return ChunkRecord(
        start, tuple(one_line(r.text) if r is not None else "" for r in results),
        sum(engine_requests(r) for r in results if r is not None),
        sum(r.prompt_tokens for r in results if r is not None),
        sum(r.completion_tokens for r in results if r is not None), elapsed, dict(issues),
    )


async def _fuse(translator: Translator, texts: list[str], candidates: Sequence[tuple[str, ...]], corpus: Corpus,
                options: TranslateOptions) -> list[TranslationResult | None]:
    """One fusion request per sentence that has candidates, all in flight together."""

    async def fuse_one(text: str, found: tuple[str, ...]) -> TranslationResult | None:
        if not found:
            return None
        return await translator.atranslate(text, corpus.target, corpus.source,
                                           options=options.replace(candidates=found))

    return list(await asyncio.gather(*(fuse_one(t, c) for t, c in zip(texts, candidates))))


def engine_requests(result: TranslationResult) -> int:
    """Engine requests a result took: one per translated segment, one more per retry."""
    return sum(1 + s.retried for s in result.segments if s.translatable and not s.cached)


def one_line(text: str) -> str:
    """An output on one line (a line break would shift every later line of the file)."""
    return " ".join(text.splitlines()).strip()
