"""Streaming a planned translation: text pieces as tokens arrive, segment after segment.

Every segment's request is submitted at once (the engine batches them); the pieces come out
in document order: a segment's pieces while it decodes, then its separator, then the next
segment (already partly or fully decoded meanwhile). Detokenization is incremental and
never splits a UTF-8 character: while the decoded text ends in U+FFFD (a character whose
bytes are not all there yet) nothing is emitted. Cleanup runs incrementally too
(cleanup.StreamCleaner), so the pieces join to exactly the text `translate` would return for
the same answers.
"""
from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

from hymt.engine.outputs import RequestOutput
from hymt.translate.cleanup import StreamCleaner
from hymt.translate.pipeline import Pipeline, Plan, Work
from hymt.translate.quality import check_translation


class _SegmentStream:
    """Turns one request's deltas into clean text pieces."""

    def __init__(self, pipeline: Pipeline, work: Work) -> None:
        self.pipeline, self.work = pipeline, work
        self.cleaner = StreamCleaner(work.source)
        self.ids: list[int] = []
        self.last: RequestOutput | None = None

    def push(self, delta: RequestOutput) -> str:
        self.last = delta
        self.ids.extend(delta.new_token_ids)
        raw = self.pipeline.model.decode(self.ids)
        if raw.endswith("\ufffd"):
            return ""  # a character is still incomplete
        return self.cleaner.feed(raw)

    def finish(self) -> str:
        if self.last is not None and self.last.token_ids:
            self.ids = list(self.last.token_ids)
        piece = self.cleaner.finish(self.pipeline.model.decode(self.ids))
        work = self.work
        work.text = self.cleaner.emitted
        work.prompt_tokens = len(work.prompt_ids)
        work.completion_tokens = len(self.ids)
        reason = self.last.finish_reason if self.last is not None else None
        work.issues = check_translation(
            work.source, work.text, target=work.target, source_lang=work.source_lang, finish_reason=reason
        )
        return piece


def _owners(plan: Plan) -> dict[tuple[int, int], Work]:
    return {user: work for work in plan.works for user in work.users}


def _store(pipeline: Pipeline, finished: list[Work]) -> None:
    if pipeline.cache is not None:
        pipeline.cache.put_many([(w.key, w.text) for w in finished if w.key and not w.issues])


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


def stream_plan(pipeline: Pipeline, plan: Plan, engine) -> Iterator[str]:
    owners = _owners(plan)
    handles = {id(w): engine.submit(w.prompt_ids, w.params) for w in plan.works}
    finished: list[Work] = []
    done: set[int] = set()
    try:
        for i, seg in enumerate(plan.docs[0].segments):
            work = owners.get((0, i))
            if work is not None and id(work) not in done:
                stream = _SegmentStream(pipeline, work)
                for delta in _sync_deltas(handles[id(work)]):
                    piece = stream.push(delta)
                    if piece:
                        yield piece
                tail = stream.finish()
                if tail:
                    yield tail
                done.add(id(work))
                finished.append(work)
                text = ""
            else:
                text = work.text if work is not None else seg.text
            if text + seg.separator_after:
                yield text + seg.separator_after
    finally:
        for work in plan.works:
            if id(work) not in done:
                handles[id(work)].cancel()
        _store(pipeline, finished)


async def astream_plan(pipeline: Pipeline, plan: Plan, engine) -> AsyncIterator[str]:
    owners = _owners(plan)
    handles = {id(w): engine.submit(w.prompt_ids, w.params) for w in plan.works}
    finished: list[Work] = []
    done: set[int] = set()
    try:
        for i, seg in enumerate(plan.docs[0].segments):
            work = owners.get((0, i))
            if work is not None and id(work) not in done:
                stream = _SegmentStream(pipeline, work)
                async for delta in handles[id(work)].stream():
                    piece = stream.push(delta)
                    if piece:
                        yield piece
                tail = stream.finish()
                if tail:
                    yield tail
                done.add(id(work))
                finished.append(work)
                text = ""
            else:
                text = work.text if work is not None else seg.text
            if text + seg.separator_after:
                yield text + seg.separator_after
    finally:
        for work in plan.works:
            if id(work) not in done:
                handles[id(work)].cancel()
        await asyncio.to_thread(_store, pipeline, finished)
