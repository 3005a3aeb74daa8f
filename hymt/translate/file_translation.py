"""Files: a document's bytes in, the translated document's bytes out, in its own format."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePath

from hymt.documents.registry import format_for_filename, get_format
from hymt.documents.units import DocumentFormat, ParsedDocument
from hymt.errors import InvalidInputError
from hymt.languages import Language
from hymt.translate.options import TranslateOptions
from hymt.translate.pipeline import DocumentOutcome
from hymt.translate.result import Detection, Segment


@dataclass(frozen=True)
class DocumentTranslation:
    """A translated file.

    Attributes:
        data: the translated document, in the format of `format` (a PDF comes back as DOCX).
        format: the input's format name.
        filename: the name to give the translated file ("" when no name was given).
        media_type: its MIME type.
        source / target / detection: the languages (detection when the source was "auto").
        segments: every segment, in order.
        prompt_tokens / completion_tokens / elapsed_s: what it cost.
        issues: the distinct quality issues left on segments.
    """

    data: bytes
    format: str
    filename: str
    media_type: str
    source: Language | None
    target: Language
    detection: Detection | None
    segments: tuple[Segment, ...] = field(repr=False)
    prompt_tokens: int
    completion_tokens: int
    elapsed_s: float
    issues: tuple[str, ...] = ()

    @property
    def translated_segments(self) -> int:
        return sum(1 for s in self.segments if s.translatable)


def document_format(format: str | None, filename: str | None) -> DocumentFormat:
    """The format named, else the one of the file name's suffix."""
    if format:
        return get_format(format)
    if filename:
        return format_for_filename(filename)
    raise InvalidInputError("a file needs its format or a file name to tell it by", field="format")


def parse_file(data: bytes, fmt: DocumentFormat, options: TranslateOptions) -> ParsedDocument:
    if not isinstance(data, (bytes, bytearray)):
        raise InvalidInputError(f"data must be bytes, got {type(data).__name__}", field="file")
    return fmt.parse_markup(bytes(data), options.tag_rules)


def translated_name(filename: str | None, fmt: DocumentFormat, target: Language) -> str:
    """`report.docx` -> `report.de.docx` (a PDF's translation: `report.de.docx`)."""
    if not filename:
        return ""
    path = PurePath(PurePath(filename).name)  # never a directory part
    return f"{path.stem}.{target.code}{fmt.translated_suffix(path.suffix)}"


def document_translation(outcome: DocumentOutcome, fmt: DocumentFormat, filename: str | None,
                         target: Language) -> DocumentTranslation:
    segments = outcome.segments
    return DocumentTranslation(
        data=outcome.data, format=fmt.name, filename=translated_name(filename, fmt, target),
        media_type=fmt.translated_media_type, source=outcome.source, target=target, detection=outcome.detection,
        segments=segments, prompt_tokens=sum(s.prompt_tokens for s in segments),
        completion_tokens=sum(s.completion_tokens for s in segments), elapsed_s=outcome.elapsed_s,
        issues=tuple(dict.fromkeys(i for s in segments for i in s.issues)),
    )
