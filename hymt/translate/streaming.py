"""Streaming a planned translation: text pieces as tokens arrive, segment after segment.

Every segment's request is submitted at once (the engine batches them); the pieces come out
in document order: a segment's pieces while it decodes, then its separator, then the next
segment (already partly or fully decoded meanwhile). Detokenization is incremental and
never splits a UTF-8 character: while the decoded text ends in U+FFFD (a character whose
bytes are not all there yet) nothing is emitted. Cleanup runs incrementally too
(cleanup.StreamCleaner), so the pieces join to exactly the text `translate` would return for
the same answers.

`stream_plan` / `astream_plan` yield the text pieces (str), then one TranslationResult with
the token counts, issues and detection of what was streamed (its text is the joined pieces).
Both drive one segment walk (`_walk`); they differ only in how they wait for the engine.
`TranslationStream` is what `Translator.stream` hands out: text-only iteration, the
result kept aside.
"""
from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

from hymt.engine.outputs import RequestOutput
from hymt.translate.cleanup import StreamCleaner
from hymt.translate.detokenize import IncrementalDecoder
from hymt.translate.pipeline import Pipeline, Plan, Work
from hymt.translate.quality import check_translation
from hymt.translate.result import TranslationResult


class _SegmentStream:
    """Turns one request's deltas into clean text pieces."""

    def __init__(self, pipeline: Pipeline, work: Work) -> None:
        self.pipeline, self.work = pipeline, work
        self.cleaner = StreamCleaner(work.source)
        self.decoder = IncrementalDecoder(pipeline.model.decode)
        self.last: RequestOutput | None = None

    def push(self, delta: RequestOutput) -> str:
        self.last = delta
        if not self.decoder.push(delta.new_token_ids):
            return ""  # nothing new, or a character is still incomplete
        return self.cleaner.feed(self.decoder.text)

    def finish(self) -> str:
        ids = list(self.last.token_ids) if self.last is not None and self.last.token_ids else self.decoder.ids
        piece = self.cleaner.finish(self.pipeline.model.decode(ids))
        work = self.work
        work.text = self.cleaner.emitted
        work.prompt_tokens = len(work.prompt_ids)
        work.completion_tokens = len(ids)
        reason = self.last.finish_reason if self.last is not None else None
        work.issues = check_translation(
            work.source, work.text, target=work.target, source_lang=work.source_lang, finish_reason=reason,
            ignore_eos=work.params.ignore_eos,
        )
        return piece


def _walk(plan: Plan) -> Iterator[Work | str]:
    """The one document of `plan` in order: a Work to stream now (at the first segment it
    answers), or text that passes through (separators, pass-through and cached segments,
    repeats of a Work already streamed; the driver has set its text by then)."""
    owners = {user: work for work in plan.works for user in work.users}
    started: set[int] = set()
    for i, seg in enumerate(plan.docs[0].segments):
        work = owners.get((0, i))
        if work is not None and id(work) not in started:
            started.add(id(work))
            yield work
            text = ""
        else:
            text = work.text if work is not None else seg.text
        if text + seg.separator_after:
            yield text + seg.separator_after


class _Run:
    """One streamed plan's engine requests: every Work submitted at once; what finished."""

    def __init__(self, pipeline: Pipeline, plan: Plan, engine) -> None:
        self.pipeline, self.plan = pipeline, plan
        self.handles = {id(w): engine.submit(w.prompt_ids, w.params) for w in plan.works}
        self.finished: list[Work] = []
        self.unstored: list[Work] = []

    def done(self, work: Work) -> None:
        self.finished.append(work)
        self.unstored.append(work)

    def store(self) -> None:
        """Cache the finished answers not cached yet (those without issues)."""
        works, self.unstored = self.unstored, []
        if self.pipeline.cache is not None:
            self.pipeline.cache.put_many([(w.key, w.text) for w in works if w.key and not w.issues])

    def result(self) -> TranslationResult:
        return self.pipeline.results(self.plan)[0]

    def cancel_unfinished(self) -> None:
        finished = {id(w) for w in self.finished}
        for work in self.plan.works:
            if id(work) not in finished:
                self.handles[id(work)].cancel()


def _sync_deltas(handle) -> Iterator[RequestOutput]:
    """Iterate a handle's async stream from blocking code (a private event loop)."""
    loop = asyncio.new_event_loop()
    agen = handle.stream().__aiter__()
    try:
        while True:
            try:
                yield loop.run_until_complete(agen.__anext__())
            except StopAsyncIteration:
                return
    finally:
        loop.run_until_complete(agen.aclose())
        loop.close()


def stream_plan(pipeline: Pipeline, plan: Plan, engine) -> Iterator[str | TranslationResult]:
    """The pieces of a one-document plan as they decode, then its TranslationResult."""
    run = _Run(pipeline, plan, engine)
    try:
        for item in _walk(plan):
            if isinstance(item, str):
                yield item
                continue
            stream = _SegmentStream(pipeline, item)
            for delta in _sync_deltas(run.handles[id(item)]):
                piece = stream.push(delta)
                if piece:
                    yield piece
            tail = stream.finish()
            run.done(item)
            if tail:
                yield tail
        run.store()  # before the result: a consumer may stop at the result
        yield run.result()
    finally:
        run.cancel_unfinished()
        run.store()  # what finished before the consumer stopped


async def astream_plan(pipeline: Pipeline, plan: Plan, engine) -> AsyncIterator[str | TranslationResult]:
    """`stream_plan` for asyncio: the same pieces, then the same TranslationResult."""
    run = _Run(pipeline, plan, engine)
    try:
        for item in _walk(plan):
            if isinstance(item, str):
                yield item
                continue
            stream = _SegmentStream(pipeline, item)
            async for delta in run.handles[id(item)].stream():
                piece = stream.push(delta)
                if piece:
                    yield piece
            tail = stream.finish()
            run.done(item)
            if tail:
                yield tail
        await asyncio.to_thread(run.store)
        yield run.result()
    finally:
        run.cancel_unfinished()
        if run.unstored:
            await asyncio.to_thread(run.store)


class TranslationStream:
    """A streamed translation: iterate for the text pieces; `result` once they are all out.

    Attributes:
        result: the TranslationResult (token counts, issues, detection), None until the
            last piece has been taken.
    """

    def __init__(self, items: Iterator[str | TranslationResult]) -> None:
        self._items = items
        self.result: TranslationResult | None = None

    def __iter__(self) -> TranslationStream:
        return self

    def __next__(self) -> str:
        item = next(self._items)
        while not isinstance(item, str):
            self.result = item
            item = next(self._items)  # StopIteration after the result ends the pieces
        return item

    def close(self) -> None:
        """Stop early: cancels the requests still decoding."""
        self._items.close()

    def __enter__(self) -> TranslationStream:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
