"""Texts as documents of the format a call names (the text APIs' `format`): the registry's
formats marked `text` (hymt.documents.registry)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from hymt.documents.registry import format_names, get_format
from hymt.documents.units import DocumentFormat, ParsedDocument
from hymt.documents.whole_text import WholeText
from hymt.errors import InvalidInputError

if TYPE_CHECKING:
    from hymt.translate.options import TranslateOptions

def text_format_names() -> tuple[str, ...]:
    """Every format a text may be given in."""
    return format_names(text_only=True)


def check_text_format(name: object, field: str = "format") -> str:
    """The canonical name of a text format; InvalidInputError lists the valid ones."""
    key = name.strip().lower() if isinstance(name, str) else None
    if key == "text":  # the default: no need to load the format table to know it
        return key
    if key not in text_format_names():
        raise InvalidInputError(f"unknown format {name!r}; valid formats: {', '.join(text_format_names())}",
                                field=field)
    return key


def text_format(name: str) -> DocumentFormat:
    return get_format(name, text_only=True)


def parse_texts(texts: list[str], options: TranslateOptions) -> list[ParsedDocument]:
    """Each text parsed as `options.format`; templates that read the whole text get it whole."""
    from hymt.translate.request import WHOLE_TEXT_TEMPLATES

    if options.template in WHOLE_TEXT_TEMPLATES:
        return [WholeText(text) for text in texts]
    fmt = text_format(options.format)
    return [fmt.parse_markup(text.encode("utf-8"), options.tag_rules) for text in texts]
