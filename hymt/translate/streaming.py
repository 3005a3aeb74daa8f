"""Streaming a planned translation: the rendered document as far as it is known, as tokens arrive.

Every segment's request is submitted at once (the engine batches them); output comes in
document order. After each step of the segment being read, the document is rendered with
everything before that point translated, the segment's partial answer in place, and a marker
where the unknown part begins; what lies before the marker is final and what was not sent yet
goes out. So the pieces are the format's own output (entities escaped, markup restored) and
join to exactly the text `translate` returns for the same answers. A segment with inline tags
goes out whole once it is done, since its tags cannot be checked before that. Cleanup runs
incrementally (cleanup.StreamCleaner); detokenization never splits a UTF-8 character.

Streaming cannot take text back, so the quality guard judges but never retries here.

`stream_plan` / `astream_plan` yield the text pieces (str), then one TranslationResult.
`TranslationStream` is what `Translator.stream` hands out: text-only iteration, the result
kept aside.
"""
from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Generator, Iterator

from hymt.documents.inline_tags import has_tags, join_trees, parse_tree
from hymt.documents.units import Node, Tree
from hymt.engine.async_engine import AsyncEngine, RequestHandle
from hymt.engine.outputs import RequestOutput
from hymt.translate.cleanup import StreamCleaner
from hymt.translate.detokenize import IncrementalDecoder
from hymt.translate.pipeline import Doc, Pipeline, Plan, Work
from hymt.translate.result import TranslationResult, translation_result

# Marks where the known output ends (private-use characters no format escapes or input carries).
_UNKNOWN = "\ue000\ue003"
#: The least time between two renders of a partial answer: rendering costs the whole document,
#: and a long answer arrives one token per engine step.
PARTIAL_RENDER_INTERVAL_S = 0.025


class _Document:
    """The one document of a plan, rendered as far as it is known."""

    def __init__(self, plan: Plan) -> None:
        self.plan, self.doc = plan, plan.docs[0]
        self.done: dict[int, Tree] = {}  # segment index -> its final tree
        self.sent = ""
        self._rendered_at = 0.0

    def partial_due(self) -> bool:
        """Whether a partial answer may be rendered now (at most every PARTIAL_RENDER_INTERVAL_S)."""
        now = time.monotonic()
        if now - self._rendered_at < PARTIAL_RENDER_INTERVAL_S:
            return False
        self._rendered_at = now
        return True

    def settle(self, index: int, text: str) -> None:
        self.done[index] = parse_tree(text)

    def piece(self, index: int, partial: str | None) -> str:
        """What became known up to segment `index` (its partial answer, or nothing of it)."""
        rendered = self.doc.parsed.render_for(self._trees(index, partial), self.plan.request.target.code)
        known = rendered.decode("utf-8").split(_UNKNOWN, 1)[0]
        if not known.startswith(self.sent) or len(known) <= len(self.sent):
            return ""
        piece, self.sent = known[len(self.sent):], known
        return piece

    def _trees(self, index: int, partial: str | None) -> list[Tree]:
        doc, trees, start = self.doc, [], 0
        for end in doc.unit_ends:
            parts = []
            for i in range(start, end):
                seg = doc.segments[i]
                parts.append((self._tree(i, index, partial, seg.source), seg.separator_after))
            trees.append(join_trees(parts))
            start = end
        return trees

    def _tree(self, i: int, index: int, partial: str | None, source: str) -> Tree:
        if i in self.done:
            return self.done[i]
        if i != index:
            return parse_tree(source)
        known: tuple[Node, ...] = (partial,) if partial else ()
        return (*known, _UNKNOWN, *parse_tree(source))  # the source's tags keep the unit whole


class _SegmentStream:
    """Turns one request's deltas into the segment's clean partial answer."""

    def __init__(self, pipeline: Pipeline, work: Work) -> None:
        self.pipeline, self.work = pipeline, work
        self.cleaner = StreamCleaner(work.source)
        self.decoder = IncrementalDecoder(pipeline.model.decode)
        self.last: RequestOutput | None = None
        self.tagged = has_tags(work.source)

    def push(self, delta: RequestOutput) -> bool:
        """Take a delta; True when the partial answer grew."""
        self.last = delta
        if not self.decoder.push(delta.new_token_ids) or self.tagged:
            return False
        return bool(self.cleaner.feed(self.decoder.text))

    @property
    def partial(self) -> str:
        return self.cleaner.emitted

    def finish(self) -> None:
        last = self.last
        out = last if last is not None else RequestOutput("", self.work.prompt_ids, finished=True)
        self.work.text, self.work.verdict = self.pipeline.answer(self.work, out)
        self.work.prompt_tokens = len(self.work.prompt_ids)
        self.work.completion_tokens = self.work.answer_tokens = len(out.token_ids)


def _walk(plan: Plan) -> Iterator[tuple[int, Work | None]]:
    """Segment indices in document order, each with the Work to stream now (at the first
    segment it answers) or None (pass-through, cached, or a repeat of a Work streamed)."""
    owners = {i: work for work in plan.works for (_, i) in work.users}
    started: set[int] = set()
    for i in range(len(plan.docs[0].segments)):
        work = owners.get(i)
        if work is not None and id(work) not in started:
            started.add(id(work))
            yield i, work
        else:
            yield i, None


class _Run:
    """One streamed plan's engine requests: every Work submitted at once; what finished."""

    def __init__(self, pipeline: Pipeline, plan: Plan, engine: AsyncEngine) -> None:
        self.pipeline, self.plan = pipeline, plan
        self.handles = {id(w): engine.submit(w.prompt_ids, w.params) for w in plan.works}
        self.finished: list[Work] = []
        self.unstored: list[Work] = []
        self.document = _Document(plan)

    def done(self, work: Work) -> None:
        self.finished.append(work)
        self.unstored.append(work)

    def settled(self, index: int) -> str:
        """Segment `index` is final: what that makes known (its text, and the markup up to the
        next segment)."""
        doc: Doc = self.plan.docs[0]
        owner = next((w for w in self.finished if (0, index) in w.users), None)
        self.document.settle(index, owner.text if owner is not None else doc.segments[index].text)
        return self.document.piece(index + 1, None)

    def store(self) -> None:
        """Cache the finished answers not cached yet (those that passed)."""
        works, self.unstored = self.unstored, []
        self.pipeline.store(works)

    def result(self) -> TranslationResult:
        outcome = self.pipeline.outcomes(self.plan)[0]
        return translation_result(outcome, self.plan.request)

    def tail(self) -> str:
        """What the final document adds to what was sent (nothing, when all went well)."""
        final = self.pipeline.outcomes(self.plan)[0].data.decode("utf-8")
        sent = self.document.sent
        return final[len(sent):] if final.startswith(sent) else ""

    def cancel_unfinished(self) -> None:
        finished = {id(w) for w in self.finished}
        for work in self.plan.works:
            if id(work) not in finished:
                self.handles[id(work)].cancel()


def _sync_deltas(handle: RequestHandle) -> Iterator[RequestOutput]:
    """Iterate a handle's async stream from blocking code (a private event loop)."""
    loop = asyncio.new_event_loop()
    agen = handle.stream()
    try:
        while True:
            try:
                yield loop.run_until_complete(agen.__anext__())
            except StopAsyncIteration:
                return
    finally:
        loop.run_until_complete(agen.aclose())
        loop.close()


def stream_plan(pipeline: Pipeline, plan: Plan,
                engine: AsyncEngine) -> Generator[str | TranslationResult, None, None]:
    """The pieces of a one-document plan as they decode, then its TranslationResult."""
    run = _Run(pipeline, plan, engine)
    try:
        for index, work in _walk(plan):
            if work is not None:
                stream = _SegmentStream(pipeline, work)
                for delta in _sync_deltas(run.handles[id(work)]):
                    if stream.push(delta) and run.document.partial_due():
                        if piece := run.document.piece(index, stream.partial):
                            yield piece
                stream.finish()
                run.done(work)
            if piece := run.settled(index):
                yield piece
        if tail := run.tail():
            yield tail
        run.store()  # before the result: a consumer may stop at the result
        yield run.result()
    finally:
        run.cancel_unfinished()
        run.store()  # what finished before the consumer stopped


async def astream_plan(pipeline: Pipeline, plan: Plan, engine: AsyncEngine) -> AsyncIterator[str | TranslationResult]:
    """`stream_plan` for asyncio: the same pieces, then the same TranslationResult."""
    run = _Run(pipeline, plan, engine)
    try:
        for index, work in _walk(plan):
            if work is not None:
                stream = _SegmentStream(pipeline, work)
                async for delta in run.handles[id(work)].stream():
                    if stream.push(delta) and run.document.partial_due():
                        if piece := run.document.piece(index, stream.partial):
                            yield piece
                stream.finish()
                run.done(work)
            if piece := run.settled(index):
                yield piece
        if tail := run.tail():
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

    def __init__(self, items: Generator[str | TranslationResult, None, None]) -> None:
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

    def __exit__(self, *exc: object) -> None:
        self.close()
