"""The contract between document formats and the translation pipeline.

A format parses a document into `Unit`s: the stretches of text a reader sees, in document
order, each written as the model should read it: entities and escapes decoded, inline markup
(bold, links, line breaks inside a sentence, a DOCX run's formatting) replaced by numbered
tags, `<sN>…</sN>` around content and `<sN/>` where an element has none (inline_tags.py).

The pipeline translates every unit (split into sentences where the unit allows it) and hands
the format one `Tree` per unit: the translation with each of the unit's tags exactly once and
well nested, already checked. The format then renders the output document from the trees,
escaping text for where it goes and putting each tag's original markup back. Everything that
is not in a unit stays as it was.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hymt.errors import InvalidInputError
from hymt.languages import get_language


@dataclass(frozen=True)
class TagNode:
    """Tag `number` of a unit and the translated content inside it (empty for a void tag)."""

    number: int
    children: tuple[Node, ...] = ()
    void: bool = False


#: A piece of translated text: plain text, or a tag with its content.
Node = str | TagNode
#: One unit's translation, in order.
Tree = tuple[Node, ...]


@dataclass(frozen=True)
class Unit:
    """One translatable stretch of a document.

    Attributes:
        text: what the model reads (decoded text, inline markup as numbered tags).
        split: the pipeline may split it into sentences; False keeps it one request (a
            subtitle cue, a spreadsheet cell, a UI string).
        context: text the unit follows, for the context template (neighbouring subtitle
            cues); "" when none.
        where: a short label of the place in the document ("p 12", "Sheet1!B4", "cue 7"),
            for progress and error messages.
    """

    text: str
    split: bool = True
    context: str = ""
    where: str = ""


class ParsedDocument(ABC):
    """A parsed document: its units, and how to write the translated document."""

    @property
    @abstractmethod
    def units(self) -> tuple[Unit, ...]:
        """The units to translate, in document order."""

    @abstractmethod
    def render(self, translations: Sequence[Tree]) -> bytes:
        """The translated document. `translations[i]` is unit i's translation; the
        pipeline guarantees one per unit, each with exactly the unit's tags."""

    def render_for(self, translations: Sequence[Tree], target_language: str) -> bytes:
        """The translated document, labelled for `target_language` (a hymt language code such
        as "de" or "zh-Hant"). Formats that record their language override it: a PO file's
        Language and Plural-Forms (and so the number of plural forms it writes), XLIFF's
        target language. The others write what `render` writes."""
        return self.render(translations)


class LabelledDocument(ParsedDocument):
    """A document that records its own language: both renders go through `_render`, given the
    target's language code (None: leave the document's label as it is)."""

    def render(self, translations: Sequence[Tree]) -> bytes:
        return self._render(translations, None)

    def render_for(self, translations: Sequence[Tree], target_language: str) -> bytes:
        return self._render(translations, _language_label(target_language))

    @abstractmethod
    def _render(self, translations: Sequence[Tree], language: str | None) -> bytes:
        """The translated document, labelled `language` unless it is None."""


def _language_label(target_language: str) -> str | None:
    """hymt's code for the target ("de", "zh-Hant"), else the name as given (a language the
    document may know although hymt does not); None when it is blank."""
    try:
        return get_language(target_language, field="target_language").code
    except InvalidInputError:
        return target_language.strip() or None


@dataclass(frozen=True)
class TagRules:
    """How a markup format treats elements by name (DeepL's tag-handling options).

    Attributes:
        ignore: elements whose content is never translated (kept byte for byte).
        splitting: elements that always end a unit, as a paragraph does.
        non_splitting: elements that never end a unit: they travel inside the sentence as
            numbered tags, whatever the format would otherwise do with them.
        outline_detection: let the format decide the structure from the markup it knows
            (True, the default); False: only `splitting` elements (and the document's edges)
            end units.
    """

    ignore: frozenset[str] = frozenset()
    splitting: frozenset[str] = frozenset()
    non_splitting: frozenset[str] = frozenset()
    outline_detection: bool = True


@dataclass(frozen=True)
class DocumentFormat:
    """One format hymt reads and writes.

    Attributes:
        name: the format's name in APIs and on the CLI ("html", "docx", ...).
        suffixes: file-name suffixes, lower case with the dot (".html", ".htm").
        media_type: the MIME type of its files.
        parse: reads a file's bytes; raises InvalidDocumentError for a file it cannot read.
        text: a text format, which the SDK and the text APIs also accept as a string
            (its bytes are UTF-8).
        parse_with_rules: for markup formats that honour TagRules, their parser taking them
            (`parse` is then `parse_with_rules(data, TagRules())`); None for the others.
        output_suffix: the suffix of the translated file when it is not the input's (a PDF
            comes back as ".docx"); "" for the input's own.
        output_media_type: the MIME type of the translated file when it is not `media_type`;
            "" for the same.
    """

    name: str
    suffixes: tuple[str, ...]
    media_type: str
    parse: Callable[[bytes], ParsedDocument]
    text: bool = False
    output_suffix: str = ""
    output_media_type: str = ""
    parse_with_rules: Callable[[bytes, TagRules], ParsedDocument] | None = None

    def parse_markup(self, data: bytes, rules: TagRules) -> ParsedDocument:
        """`data` parsed with `rules` where the format honours them, else as `parse` does."""
        if self.parse_with_rules is not None:
            return self.parse_with_rules(data, rules)
        return self.parse(data)

    def translated_suffix(self, input_suffix: str) -> str:
        """The suffix to give the translated file of an input with `input_suffix`."""
        return self.output_suffix or input_suffix

    @property
    def translated_media_type(self) -> str:
        """The MIME type of the translated file."""
        return self.output_media_type or self.media_type
