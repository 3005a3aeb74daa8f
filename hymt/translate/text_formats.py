"""Texts as documents of the format a call names (the text APIs' `format`)."""
from __future__ import annotations

from hymt.documents.units import DocumentFormat, ParsedDocument
from hymt.documents.whole_text import WholeText
from hymt.translate.legacy_formats import LEGACY_FORMATS
from hymt.translate.options import TranslateOptions
from hymt.translate.request import WHOLE_TEXT_TEMPLATES


def text_format(name: str) -> DocumentFormat:
    return LEGACY_FORMATS[name]


def parse_texts(texts: list[str], options: TranslateOptions) -> list[ParsedDocument]:
    """Each text parsed as `options.format`; templates that read the whole text get it whole."""
    if options.template in WHOLE_TEXT_TEMPLATES:
        return [WholeText(text) for text in texts]
    fmt = text_format(options.format)
    return [fmt.parse_markup(text.encode("utf-8"), options.tag_rules) for text in texts]
