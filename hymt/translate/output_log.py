"""Engine outputs recorded as they arrive, so an interrupted translation resumes where it stopped.

A document job passes an `OutputLog`; the driver looks every engine request up in it before
submitting (a recorded answer is reused, not asked for again) and records each answer the
moment the engine returns it. A request is identified by its prompt ids and sampling, the same
key the pipeline dedupes by, so a re-planned document finds its earlier answers whatever the
cache settings.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Protocol

from hymt.engine.outputs import FINISH_REASONS, FinishReason, RequestOutput
from hymt.engine.sampling import SamplingParams


@dataclass(frozen=True)
class RecordedOutput:
    """What the pipeline needs of a finished engine request."""

    token_ids: tuple[int, ...]
    finish_reason: FinishReason

    def as_output(self, prompt_ids: list[int]) -> RequestOutput:
        return RequestOutput("recorded", list(prompt_ids), token_ids=list(self.token_ids), finished=True,
                             finish_reason=self.finish_reason)

    @classmethod
    def parse(cls, token_ids: tuple[int, ...], finish_reason: str) -> RecordedOutput:
        """A recorded output read back from storage (its finish reason checked)."""
        if finish_reason not in FINISH_REASONS:
            raise ValueError(f"not a finish reason: {finish_reason!r}")
        return cls(token_ids, finish_reason)

    @classmethod
    def of(cls, output: RequestOutput) -> RecordedOutput:
        return cls(tuple(output.token_ids), output.finish_reason or "stop")


class OutputLog(Protocol):
    """Where a resumable translation keeps its engine answers."""

    def get(self, key: str) -> RecordedOutput | None: ...

    def put(self, key: str, output: RecordedOutput) -> None: ...


class MemoryOutputLog:
    """An OutputLog in a dict (tests, and callers that resume within one process)."""

    def __init__(self) -> None:
        self.outputs: dict[str, RecordedOutput] = {}

    def get(self, key: str) -> RecordedOutput | None:
        return self.outputs.get(key)

    def put(self, key: str, output: RecordedOutput) -> None:
        self.outputs[key] = output


def request_key(prompt_ids: list[int], params: SamplingParams) -> str:
    """The identity of one engine request: its prompt and its sampling."""
    payload = json.dumps([prompt_ids, repr(params)])
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()
