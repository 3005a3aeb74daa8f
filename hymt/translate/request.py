"""A translate call resolved against the model family: languages, templates, glossary index.

Template choice per segment (the official templates do not combine): an explicit
`template` wins; otherwise a segment that contains a glossary term uses `terminology` (with
only the terms it contains), else a segment with inline tags the family's template for
tagged text, else `context` when a context is given, else `style` when a style is given,
else `default`.
"""
from __future__ import annotations

from dataclasses import dataclass

from hymt.errors import InvalidInputError, UnsupportedTemplateError
from hymt.families import FAMILIES, ModelFamily
from hymt.languages import Language, get_language
from hymt.translate.glossary import Glossary, GlossaryIndex
from hymt.translate.options import TranslateOptions

AUTO = ("", "auto")
#: What each explicitly chosen template needs from the options, by field name.
_TEMPLATE_INPUTS = {
    "terminology": "glossary",
    "context": "context",
    "style": "style",
    "structured": "format_type",
    "personalization": "preferences",
    "fusion": "candidates",
}
#: Templates that read the whole text at once: it is not split into sentences. Fusion's
#: candidates translate the whole text, so its source must be the whole text too.
WHOLE_TEXT_TEMPLATES = frozenset({"delimiters", "structured", "fusion"})


@dataclass(frozen=True)
class TranslationRequest:
    """What to translate into, from what, and how, checked against the family.

    Attributes:
        target: the language to translate into.
        source: the source language, or None to detect it per text.
        options: the call's options.
        glossary: the options' glossary, indexed for matching.
    """

    target: Language
    source: Language | None
    options: TranslateOptions
    glossary: GlossaryIndex


def resolve_request(family: ModelFamily, to: object, source: object, options: TranslateOptions) -> TranslationRequest:
    """Languages parsed and templates checked (raises hymt.errors naming the field)."""
    target = get_language(to, field="to")  # type: ignore[arg-type]
    src = None if source is None or (isinstance(source, str) and source.strip().lower() in AUTO) else (
        get_language(source, field="source"))  # type: ignore[arg-type]
    _check_templates(family, options, src)
    if options.fusion:
        require_template(family, "fusion", "fusion")
        if options.candidates:
            raise InvalidInputError("give candidates or fusion=N, not both", field="fusion")
    return TranslationRequest(target, src, options, GlossaryIndex(options.glossary))


def _check_templates(family: ModelFamily, options: TranslateOptions, source: Language | None) -> None:
    chosen = options.template
    if chosen is not None:
        require_template(family, chosen, "template")
        needed = _TEMPLATE_INPUTS.get(chosen)
        if needed and needed != "glossary" and not getattr(options, needed):
            raise InvalidInputError(f"the {chosen!r} template needs {needed}", field=needed)
        if chosen == "fusion" and source is None:
            raise InvalidInputError("the 'fusion' template needs the source language", field="source")
        return
    for template, name in (("terminology", "glossary"), ("context", "context"), ("style", "style")):
        if getattr(options, name):
            require_template(family, template, name)
    for name in ("format_type", "preferences", "candidates"):
        if getattr(options, name):
            raise InvalidInputError(
                f"{name} is used only by the {_template_of(name)!r} template; set template too", field=name
            )


def _template_of(field: str) -> str:
    return next(t for t, f in _TEMPLATE_INPUTS.items() if f == field)


def require_template(family: ModelFamily, template: str, field: str) -> None:
    """UnsupportedTemplateError naming `field` unless `family` has `template`; the message
    lists the family's templates and the families that have this one."""
    if template not in family.templates:
        having = [f.name for f in FAMILIES if template in f.templates]
        raise UnsupportedTemplateError(
            f"{family.name} has no {template!r} template (needed for {field}); "
            f"supported templates: {', '.join(sorted(family.templates))}; "
            f"models with it: {', '.join(having)}",
            field=field,
        )


@dataclass(frozen=True)
class TemplateChoice:
    """The template of one segment and what it is filled with."""

    name: str
    terms: Glossary = ()
    context: str | None = None
    format_type: str | None = None


#: The structured template's data format for a sentence carrying inline tags.
TAGGED_FORMAT_TYPE = "XML"


def template_for(text: str, request: TranslationRequest, family: ModelFamily, *, tagged: bool = False,
                 unit_context: str = "") -> TemplateChoice:
    """The template of one segment (see the module doc). A segment with inline tags uses the
    family's template for tagged text (HY-MT1.5's formatted, Hy-MT2's structured) unless
    glossary terms or an explicit template decide; a unit's own context (neighbouring
    subtitle cues) joins the call's context."""
    options = request.options
    terms = request.glossary.matches(text) if options.glossary else ()
    context = "\n".join(c for c in (options.context, unit_context) if c) or None
    if options.template is not None:
        if options.template == "terminology" and not terms:
            return TemplateChoice("default")
        return TemplateChoice(options.template, terms, context, options.format_type)
    if terms:
        return TemplateChoice("terminology", terms)
    if tagged and "formatted" in family.templates:
        return TemplateChoice("formatted")
    if tagged and "structured" in family.templates:
        return TemplateChoice("structured", format_type=TAGGED_FORMAT_TYPE)
    if context and "context" in family.templates:
        return TemplateChoice("context", context=context)
    if options.style:
        return TemplateChoice("style")
    return TemplateChoice("default")
