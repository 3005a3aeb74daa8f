"""Every document format hymt reads, by name and by file suffix: the one table of formats."""
from __future__ import annotations

from pathlib import PurePath

from hymt.documents import (
    docx_format,
    epub_format,
    html,
    json_format,
    markdown,
    pdf_format,
    plain_text,
    po_format,
    pptx_format,
    xliff_format,
    xlsx_format,
    xml_markup,
    yaml_format,
)
from hymt.documents.subtitles import ass_format, srt_format, vtt_format
from hymt.documents.units import DocumentFormat
from hymt.errors import InvalidDocumentError, InvalidInputError

#: Each format module's FORMAT, in the order the docs list them.
FORMATS: tuple[DocumentFormat, ...] = (
    # Text, Markdown and HTML (docs/formats.md).
    plain_text.FORMAT,
    markdown.FORMAT,
    html.FORMAT,
    # Office documents, localisation files and PDF (docs/formats-office.md).
    docx_format.FORMAT,
    pptx_format.FORMAT,
    xlsx_format.FORMAT,
    xliff_format.FORMAT,
    po_format.FORMAT,
    json_format.FORMAT,
    yaml_format.FORMAT,
    pdf_format.FORMAT,
    # E-books (docs/formats-epub.md).
    epub_format.FORMAT,
    # Subtitles, translated cue by cue (docs/formats-subtitles.md).
    srt_format.FORMAT,
    vtt_format.FORMAT,
    ass_format.FORMAT,
    # Markup text (DeepL's tag_handling=xml) and .xml files.
    xml_markup.FORMAT,
)

_BY_NAME = {f.name: f for f in FORMATS}
_BY_SUFFIX = {suffix: f for f in FORMATS for suffix in f.suffixes}


def format_names(*, text_only: bool = False) -> tuple[str, ...]:
    return tuple(f.name for f in FORMATS if f.text or not text_only)


def get_format(name: str, *, field: str = "format", text_only: bool = False) -> DocumentFormat:
    """The format called `name` (case-insensitive); InvalidInputError lists the valid names."""
    found = _BY_NAME.get(name.strip().lower()) if isinstance(name, str) else None
    if found is None or (text_only and not found.text):
        valid = ", ".join(format_names(text_only=text_only))
        raise InvalidInputError(f"unknown {field} {name!r}; valid: {valid}", field=field)
    return found


def format_for_filename(filename: str, *, field: str = "file") -> DocumentFormat:
    """The format of a file by its suffix; InvalidDocumentError lists the supported suffixes."""
    suffixes = [s.lower() for s in PurePath(filename).suffixes]
    for n in range(len(suffixes)):
        found = _BY_SUFFIX.get("".join(suffixes[n:]))
        if found is not None:
            return found
    supported = ", ".join(sorted(_BY_SUFFIX))
    raise InvalidDocumentError(f"unsupported file type {filename!r}; supported: {supported}", field=field)
