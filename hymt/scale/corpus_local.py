"""LocalRunner: a corpus through one Translator in this process, batch after batch.

Two batches are in flight at once, so the engine starts on the next batch's segments while
the last ones of the previous batch finish; results come back in input order.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

from hymt.scale.corpus_batch import CorpusRequest, TranslatorFactory, translate_rows
from hymt.scale.corpus_io import CorpusRow, RowTranslation

#: Batches submitted at once.
IN_FLIGHT_BATCHES = 2


class LocalRunner:
    """Translates batches of rows with the Translator `factory` builds."""

    def __init__(self, factory: TranslatorFactory, request: CorpusRequest) -> None:
        self.factory = factory
        self.request = request

    def batches(self, rows: Sequence[CorpusRow], batch_size: int) -> Iterator[list[RowTranslation]]:
        """The translations of `rows`, `batch_size` rows at a time, in order."""
        translator = self.factory()
        pool = ThreadPoolExecutor(IN_FLIGHT_BATCHES, thread_name_prefix="hymt-corpus")
        pending: deque[Future[list[RowTranslation]]] = deque()
        try:
            for start in range(0, len(rows), batch_size):
                batch = rows[start:start + batch_size]
                pending.append(pool.submit(translate_rows, translator, batch, self.request))
                if len(pending) >= IN_FLIGHT_BATCHES:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:  # interrupted or done: nothing more starts; closing the engine ends what runs
            pool.shutdown(wait=False, cancel_futures=True)
            translator.close()
            pool.shutdown(wait=True)
