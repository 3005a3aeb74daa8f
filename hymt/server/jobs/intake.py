"""What a document must pass before it becomes a job: a known format, a file that format can
read, and no more segments than the server takes.

The file is parsed here once (in a worker thread), so a corrupt, encrypted or hostile file is
a 400 at upload rather than a failed job later; the formats' own checks (hymt/documents/
safety.py: zip bombs, entity expansion, paths inside archives) run as part of parsing.
Segments are counted as the pipeline splits units (sentences, then token-budget chunks) with
a tokenizer-free token estimate, so the count is close to, not exactly, the job's.
"""
from __future__ import annotations

from dataclasses import dataclass

from hymt.documents.inline_tags import plain_text
from hymt.documents.registry import formats
from hymt.documents.units import DocumentFormat
from hymt.errors import InvalidDocumentError, InvalidInputError
from hymt.server.errors import ApiError
from hymt.translate.file_translation import document_format
from hymt.translate.segmentation import DEFAULT_MAX_SEGMENT_TOKENS, unit_pieces
from hymt.translate.segmenter import approx_tokens


@dataclass(frozen=True)
class DocumentFacts:
    """A readable document: its format, its segments (estimated) and characters of text."""

    format: DocumentFormat
    segments: int
    chars: int


def supported_suffixes() -> list[str]:
    """Every file suffix a document job takes (the registry's, so new formats appear here)."""
    return sorted({suffix for fmt in formats() for suffix in fmt.suffixes})


def resolve_format(filename: str, format_name: str | None) -> DocumentFormat:
    """The format named, else the one of the file name's suffix; 400 listing the valid ones."""
    try:
        return document_format(format_name or None, filename or None)
    except InvalidDocumentError as exc:  # an unknown suffix: the message lists the supported ones
        raise ApiError(400, str(exc), type="unsupported_document", field="file",
                       valid=supported_suffixes()) from None
    except InvalidInputError as exc:  # an unknown format name, or neither name nor format
        valid = [fmt.name for fmt in formats()] if format_name else supported_suffixes()
        raise ApiError(400, str(exc), type="unsupported_document", field=exc.field or "format", valid=valid) from None


def inspect_document(data: bytes, fmt: DocumentFormat, max_segments: int) -> DocumentFacts:
    """Parse `data` as `fmt` and count it; 400 for a file the format cannot read, 413 over
    `max_segments` (--max-segments). Blocking: run it in a worker thread."""
    try:
        units = fmt.parse(data).units
    except InvalidDocumentError as exc:
        raise ApiError(400, str(exc), type="invalid_document", field="file") from None
    segments = chars = 0
    for unit in units:
        pieces = unit_pieces(unit, budget=DEFAULT_MAX_SEGMENT_TOKENS, count=approx_tokens)
        segments += sum(1 for piece in pieces if piece.translatable)
        chars += len(plain_text(unit.text))
        if segments > max_segments:
            raise ApiError(413, f"the {fmt.name} file has more than {max_segments} segments (sentences) to "
                           f"translate; the limit is {max_segments} (--max-segments)", type="too_large",
                           field="file")
    return DocumentFacts(fmt, segments, chars)
