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

#: Every format a text may be given in.
TEXT_FORMAT_NAMES: tuple[str, ...] = format_names(text_only=True)


def check_text_format(name: object, field: str = "format") -> str:
    """The canonical name of a text format; InvalidInputError lists the valid ones."""
    key = name.strip().lower() if isinstance(name, str) else None
    if key not in TEXT_FORMAT_NAMES:
        raise InvalidInputError(f"unknown format {name!r}; valid formats: {', '.join(TEXT_FORMAT_NAMES)}",
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
