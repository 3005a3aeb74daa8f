"""Typed results of the translation pipeline: Segment, TranslationResult, Detection.

All three are frozen; `to_dict()` gives plain JSON-ready data (languages as codes) for the
CLI's `--json` and the server.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hymt.languages import Language

if TYPE_CHECKING:
    from hymt.translate.pipeline import DocumentOutcome
    from hymt.translate.request import TranslationRequest


@dataclass(frozen=True)
class Segment:
    """One piece of a document: what was sent to the model and what came back.

    A document is the concatenation of `source + separator_after` over its segments, byte
    for byte; its translation is the concatenation of `text + separator_after`.

    Attributes:
        source: the source text of this piece (no leading/trailing whitespace of its own,
            except inside multi-line units such as a subtitle cue).
        text: the translation; equals `source` for pass-through pieces.
        separator_after: the exact whitespace and markup between this piece and the next
            (blank lines, list markers, code blocks, tags, subtitle timings), kept verbatim.
        translatable: False for pieces passed through without the model (whitespace,
            numbers, symbols, URLs, the empty lead piece before leading markup).
        cached: the translation came from the translation cache.
        retried: the first answer failed a quality check and was asked for again.
        retry_reasons: the issue codes of the first answer when `retried`.
        issues: issue codes of the kept answer ("empty", "repetition", "length",
            "wrong_script", "wrong_language", "markup", "echo"); empty when it passed every
            check.
        prompt_tokens / completion_tokens: tokens the engine computed for this piece
            (0 when cached or passed through; retries included).
        answer_tokens: the tokens of the answer kept (a discarded retry's or first
            attempt's not counted): what a client is billed for as its completion.
    """

    source: str
    text: str
    separator_after: str = ""
    translatable: bool = True
    cached: bool = False
    retried: bool = False
    retry_reasons: tuple[str, ...] = ()
    issues: tuple[str, ...] = ()
    prompt_tokens: int = 0
    completion_tokens: int = 0
    answer_tokens: int = 0

    def to_dict(self) -> dict:
        return {
            "source": self.source,
            "text": self.text,
            "separator_after": self.separator_after,
            "translatable": self.translatable,
            "cached": self.cached,
            "retried": self.retried,
            "retry_reasons": list(self.retry_reasons),
            "issues": list(self.issues),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "answer_tokens": self.answer_tokens,
        }


@dataclass(frozen=True)
class Detection:
    """A language guess: `language` is None (confidence 0) when the text has no letters to judge
    by or is too short to tell (a few Latin words several languages share)."""

    language: Language | None
    confidence: float

    def to_dict(self) -> dict:
        return {"language": self.language.code if self.language else None, "confidence": self.confidence}


@dataclass(frozen=True)
class TranslationResult:
    """The translation of one input text.

    Attributes:
        text: the whole translation, markup and whitespace of the input kept.
        source: the source language (given, or detected; None if detection found no letters).
        target: the target language.
        segments: every piece, in order; see `Segment`.
        prompt_tokens / completion_tokens: totals over the segments (retries included).
        answer_tokens: the tokens of the kept answers (retries not counted).
        elapsed_s: wall time of the call.
        cached: every translated piece came from the cache (False if nothing needed the model).
        retried: some piece was retried by the quality guard.
        issues: the distinct issue codes left on the kept answers, in first-seen order.
        detection: the detector's answer when the source was "auto", else None.
    """

    text: str
    source: Language | None
    target: Language
    segments: tuple[Segment, ...] = ()
    prompt_tokens: int = 0
    completion_tokens: int = 0
    answer_tokens: int = 0
    elapsed_s: float = 0.0
    cached: bool = False
    retried: bool = False
    issues: tuple[str, ...] = ()
    detection: Detection | None = field(default=None)

    def __str__(self) -> str:
        return self.text

    def to_dict(self) -> dict:
        return {
            "text": self.text,
            "source": self.source.code if self.source else None,
            "target": self.target.code,
            "segments": [s.to_dict() for s in self.segments],
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "answer_tokens": self.answer_tokens,
            "elapsed_s": self.elapsed_s,
            "cached": self.cached,
            "retried": self.retried,
            "issues": list(self.issues),
            "detection": self.detection.to_dict() if self.detection else None,
        }


@dataclass(frozen=True)
class Generation:
    """A chat answer (the OpenAI routes): the text and what the engine did for it.

    Attributes:
        text: the answer (for a raw generation: decoded, special tokens skipped, no cleanup).
        prompt_tokens / completion_tokens: tokens the engine read and wrote for it.
        finish_reason: "stop", "length" or "abort".
        token_ids: the generated ids of a raw generation; () when the answer was assembled
            from translations.
    """

    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str
    token_ids: tuple[int, ...] = ()


def translation_result(outcome: DocumentOutcome, request: TranslationRequest) -> TranslationResult:
    """The TranslationResult of one translated text document."""
    segments = outcome.segments
    translated = [s for s in segments if s.translatable]
    return TranslationResult(
        text=outcome.data.decode("utf-8"),
        source=outcome.source,
        target=request.target,
        segments=segments,
        prompt_tokens=sum(s.prompt_tokens for s in segments),
        completion_tokens=sum(s.completion_tokens for s in segments),
        answer_tokens=sum(s.answer_tokens for s in segments),
        elapsed_s=outcome.elapsed_s,
        cached=bool(translated) and all(s.cached for s in translated),
        retried=any(s.retried for s in segments),
        issues=tuple(dict.fromkeys(i for s in segments for i in s.issues)),
        detection=outcome.detection,
    )
