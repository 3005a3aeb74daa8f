"""Every document format hymt reads, by name and by file suffix: the one table of formats."""
from __future__ import annotations

import functools
import importlib
import logging
from pathlib import PurePath

from hymt.documents.units import DocumentFormat
from hymt.errors import InvalidDocumentError, InvalidInputError

logger = logging.getLogger(__name__)

#: The format modules (under hymt.documents), in the order the docs list them. Each defines
#: FORMAT. They load on first use: their libraries (python-docx, lxml, pdfminer, ...) cost a
#: third of a second to import, and a format whose library is missing is unavailable, not fatal.
FORMAT_MODULES = (
    # Text, Markdown and HTML (docs/formats.md).
    "plain_text", "markdown", "html",
    # Office documents, localisation files and PDF (docs/formats-office.md).
    "docx_format", "pptx_format", "xlsx_format", "xliff_format", "po_format", "json_format", "yaml_format",
    "pdf_format",
    # E-books (docs/formats-epub.md).
    "epub_format",
    # Subtitles, translated cue by cue (docs/formats-subtitles.md).
    "subtitles.srt_format", "subtitles.vtt_format", "subtitles.ass_format",
    # Markup text (DeepL's tag_handling=xml) and .xml files.
    "xml_markup",
)
#: Modules that could not be imported, with the reason (a missing library).
UNAVAILABLE: dict[str, str] = {}


@functools.cache
def formats() -> tuple[DocumentFormat, ...]:
    """Every available format, in FORMAT_MODULES order."""
    loaded = []
    for name in FORMAT_MODULES:
        try:
            module = importlib.import_module(f"hymt.documents.{name}")
        except ImportError as exc:
            UNAVAILABLE[name] = str(exc)
            logger.warning("document format %s is unavailable: %s", name, exc)
            continue
        loaded.append(module.FORMAT)
    return tuple(loaded)


@functools.cache
def _by_name() -> dict[str, DocumentFormat]:
    return {f.name: f for f in formats()}


@functools.cache
def _by_suffix() -> dict[str, DocumentFormat]:
    return {suffix: f for f in formats() for suffix in f.suffixes}


def __getattr__(name: str) -> object:
    if name == "FORMATS":  # the table, loaded on first use
        return formats()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def format_names(*, text_only: bool = False) -> tuple[str, ...]:
    return tuple(f.name for f in formats() if f.text or not text_only)


def get_format(name: str, *, field: str = "format", text_only: bool = False) -> DocumentFormat:
    """The format called `name` (case-insensitive); InvalidInputError lists the valid names."""
    found = _by_name().get(name.strip().lower()) if isinstance(name, str) else None
    if found is None or (text_only and not found.text):
        valid = ", ".join(format_names(text_only=text_only))
        missing = f" (unavailable, a library is missing: {'; '.join(UNAVAILABLE.values())})" if UNAVAILABLE else ""
        raise InvalidInputError(f"unknown {field} {name!r}; valid: {valid}{missing}", field=field)
    return found


def format_for_filename(filename: str, *, field: str = "file") -> DocumentFormat:
    """The format of a file by its suffix; InvalidDocumentError lists the supported suffixes."""
    suffixes = [s.lower() for s in PurePath(filename).suffixes]
    for n in range(len(suffixes)):
        found = _by_suffix().get("".join(suffixes[n:]))
        if found is not None:
            return found
    supported = ", ".join(sorted(_by_suffix()))
    raise InvalidDocumentError(f"unsupported file type {filename!r}; supported: {supported}", field=field)
