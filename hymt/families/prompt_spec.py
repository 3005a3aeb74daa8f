"""PromptSpec: everything one translation prompt is built from (see prompts.build_prompt)."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from hymt.errors import InvalidInputError
from hymt.languages import Language, get_language

#: Every template name any family knows (docs/reference/models.md §7.5). "background" is Hy-MT2's name for
#: its context template (§7.4-7); both names select the same template.
TEMPLATE_NAMES = (
    "default",
    "terminology",
    "context",
    "formatted",
    "style",
    "personalization",
    "delimiters",
    "structured",
    "fusion",
)
TEMPLATE_ALIASES = {"background": "context"}


def canonical_template(name: str) -> str:
    """The canonical template name for `name` (case-insensitive; `background` -> `context`)."""
    if not isinstance(name, str):
        raise InvalidInputError(f"template must be a string, got {type(name).__name__}", field="template")
    key = name.strip().lower()
    key = TEMPLATE_ALIASES.get(key, key)
    if key not in TEMPLATE_NAMES:
        valid = ", ".join((*TEMPLATE_NAMES, *TEMPLATE_ALIASES))
        raise InvalidInputError(f"unknown template {name!r}; valid templates: {valid}", field="template")
    return key


@dataclass(frozen=True)
class PromptSpec:
    """What to translate and how; `build_prompt(family, spec)` turns it into the user turn.

    Languages may be given as codes or names; they are resolved to `Language` here.

    Attributes:
        text: the source text (for `formatted`: text with `<sN>` tags). Must not be blank.
        target: the language to translate into.
        source: the source language, or None when unknown (the template is then chosen by
            the target alone). Only the `fusion` template needs it.
        template: one of TEMPLATE_NAMES (or an alias); normalised to the canonical name.
        glossary: (source term, target term) pairs for `terminology`.
        context: preceding text / background information for `context`.
        style: the target style for `style` (e.g. "formal business English").
        candidates: candidate translations for Chimera's `fusion` template.
        format_type: the data format for `structured` (e.g. "JSON", "YAML").
        preferences: user preference lines for `personalization`.
    """

    text: str
    target: Language
    source: Language | None = None
    template: str = "default"
    glossary: tuple[tuple[str, str], ...] = ()
    context: str | None = None
    style: str | None = None
    candidates: tuple[str, ...] = ()
    format_type: str | None = None
    preferences: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.text, str) or not self.text.strip():
            raise InvalidInputError("text must be a non-empty string", field="text")
        object.__setattr__(self, "target", get_language(self.target, field="target"))
        if self.source is not None:
            object.__setattr__(self, "source", get_language(self.source, field="source"))
        object.__setattr__(self, "template", canonical_template(self.template))
        object.__setattr__(self, "glossary", glossary_pairs(self.glossary))
        object.__setattr__(self, "candidates", string_tuple(self.candidates, "candidates"))
        object.__setattr__(self, "preferences", string_tuple(self.preferences, "preferences"))
        for name in ("context", "style", "format_type"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise InvalidInputError(f"{name} must be a string or None", field=name)


def glossary_pairs(entries: object) -> tuple[tuple[str, str], ...]:
    """A glossary as (source term, target term) pairs: from a mapping or an iterable of pairs;
    terms stripped, repeated pairs dropped, order kept. The one glossary normalisation."""
    if not entries:
        return ()
    pairs = entries.items() if isinstance(entries, Mapping) else entries
    if isinstance(pairs, str) or not isinstance(pairs, Iterable):
        raise InvalidInputError("glossary must be a mapping or a list of (source, target) pairs", field="glossary")
    result = []
    for pair in pairs:
        if (
            not isinstance(pair, (tuple, list))
            or len(pair) != 2
            or not all(isinstance(term, str) and term.strip() for term in pair)
        ):
            raise InvalidInputError(
                f"glossary entries must be (source term, target term) pairs of non-empty strings, got {pair!r}",
                field="glossary",
            )
        result.append((pair[0].strip(), pair[1].strip()))
    return tuple(dict.fromkeys(result))


def string_tuple(values: Iterable[str], field: str) -> tuple[str, ...]:
    if isinstance(values, str):  # a lone string would otherwise become one item per character
        raise InvalidInputError(f"{field} must be a list of strings, not one string", field=field)
    result = tuple(values)
    if not all(isinstance(v, str) and v.strip() for v in result):
        raise InvalidInputError(f"{field} must be non-empty strings, got {result!r}", field=field)
    return result
