"""build_prompt: the user-turn text of one translation request, from the official templates.

Which text: the family's generation picks the template set (docs/reference/models.md §7.5); the Chinese
variant is used when the source or the target is Chinese (zh, zh-Hant, yue; an unknown source
decides by the target alone), the English one otherwise. Language names, never codes: English
names in English texts, Chinese names in Chinese ones. HY-MT1.5's terminology, context and
formatted templates exist only in Chinese, so they always use Chinese names.

The result is the user turn only; ModelFamily.render_chat wraps it in the chat format.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from hymt.errors import InvalidInputError, UnsupportedTemplateError
from hymt.families import templates as T
from hymt.families.family import ModelFamily
from hymt.families.prompt_spec import PromptSpec
from hymt.languages import Language, is_chinese


def build_prompt(family: ModelFamily | str, spec: PromptSpec) -> str:
    """The user-turn text for `spec` under `family`'s official templates.

    Raises:
        UnsupportedTemplateError: the family has no such template (message lists its templates).
        InvalidInputError: a field the template needs is missing (glossary, context, ...).
    """
    if isinstance(family, str):
        from hymt.families.registry import get_family

        family = get_family(family)
    if spec.template not in family.templates:
        raise UnsupportedTemplateError(
            f"{family.name} has no {spec.template!r} template; supported: {', '.join(sorted(family.templates))}",
            field="template",
        )
    builder = _BUILDERS[(family.generation, spec.template)]
    return builder(spec, uses_chinese_template(spec))


def uses_chinese_template(spec: PromptSpec) -> bool:
    """True when the ZH<=>XX template applies (docs/reference/models.md §7)."""
    return is_chinese(spec.target) or (spec.source is not None and is_chinese(spec.source))


def fill(template: str, values: Mapping[str, str]) -> str:
    """Replace each placeholder key of `values` in one pass.

    One pass, so text put in by one placeholder (user text containing "{target_lang}") is
    never replaced again; only the exact keys are touched, so `{{var}}` and `${var}` survive.
    """
    pattern = re.compile("|".join(re.escape(key) for key in sorted(values, key=len, reverse=True)))
    return pattern.sub(lambda match: values[match.group(0)], template)


def _name(lang: Language, chinese: bool) -> str:
    return lang.chinese_name if chinese else lang.english_name


def _require(value: object, field: str, template: str) -> None:
    if not value or (isinstance(value, str) and not value.strip()):
        raise InvalidInputError(f"the {template!r} template needs {field}", field=field)


def _required(value: str | None, field: str, template: str) -> str:
    """`value`, which the template cannot do without."""
    _require(value, field, template)
    assert value is not None
    return value


#: The Chinese structured-data template's input section, and what its first line calls it.
STRUCTURED_DATA_HEADING_ZH = "# 数据输入\n"
STRUCTURED_DATA_NAME_ZH = "数据输入"


# Hunyuan-MT-7B / Chimera ----------------------------------------------------------------------
def _hmt_default(spec: PromptSpec, zh: bool) -> str:
    template = T.HMT_DEFAULT_ZH if zh else T.HMT_DEFAULT_EN
    return fill(template, {"<target_language>": _name(spec.target, zh), "<source_text>": spec.text})


def _fusion(spec: PromptSpec, zh: bool) -> str:
    del zh  # the fusion prompt exists in English only
    _require(spec.candidates, "candidates", "fusion")
    if spec.source is None:
        raise InvalidInputError("the 'fusion' template needs the source language", field="source")
    names = {
        "<target_language>": spec.target.english_name,
        "<source_language>": spec.source.english_name,
        "<source_text>": spec.text,
    }
    lines = [
        fill(T.FUSION_LINE, {"<n>": str(i), "<translated_text>": candidate})
        for i, candidate in enumerate(spec.candidates, start=1)
    ]
    return "\n".join([fill(T.FUSION_HEAD, names), *lines])


# HY-MT1.5 -------------------------------------------------------------------------------------
def _hymt15_values(spec: PromptSpec, zh: bool) -> dict[str, str]:
    return {"{target_language}": _name(spec.target, zh), "{source_text}": spec.text}


def _hymt15_default(spec: PromptSpec, zh: bool) -> str:
    return fill(T.HYMT15_DEFAULT_ZH if zh else T.HYMT15_DEFAULT_EN, _hymt15_values(spec, zh))


def _hymt15_terminology(spec: PromptSpec, zh: bool) -> str:
    _require(spec.glossary, "glossary", "terminology")
    lines = [fill(T.HYMT15_TERMS_LINE, {"{source_term}": s, "{target_term}": t}) for s, t in spec.glossary]
    tail = fill(T.HYMT15_TERMS_TAIL, _hymt15_values(spec, True))
    return "\n".join([T.HYMT15_TERMS_HEAD, *lines, tail])


def _hymt15_context(spec: PromptSpec, zh: bool) -> str:
    context = _required(spec.context, "context", "context")
    return fill(T.HYMT15_CONTEXT, {**_hymt15_values(spec, True), "{context}": context})


def _hymt15_formatted(spec: PromptSpec, zh: bool) -> str:
    values = {"{target_language}": spec.target.chinese_name, "{src_text_with_format}": spec.text}
    return fill(T.HYMT15_FORMATTED, values)


# Hy-MT2 ---------------------------------------------------------------------------------------
def _mt2_values(spec: PromptSpec, zh: bool) -> dict[str, str]:
    return {"{target_lang}": _name(spec.target, zh), "{source_text}": spec.text}


def _mt2_simple(zh_text: str, en_text: str) -> Callable[[PromptSpec, bool], str]:
    def build(spec: PromptSpec, zh: bool) -> str:
        return fill(zh_text if zh else en_text, _mt2_values(spec, zh))

    return build


def _mt2_terminology(spec: PromptSpec, zh: bool) -> str:
    _require(spec.glossary, "glossary", "terminology")
    head, line, tail = (
        (T.MT2_TERMS_HEAD_ZH, T.MT2_TERMS_LINE_ZH, T.MT2_TERMS_TAIL_ZH)
        if zh
        else (T.MT2_TERMS_HEAD_EN, T.MT2_TERMS_LINE_EN, T.MT2_TERMS_TAIL_EN)
    )
    lines = [fill(line, {"{source_term}": s, "{target_term}": t}) for s, t in spec.glossary]
    return "\n".join([head, *lines, fill(tail, _mt2_values(spec, zh))])


def _mt2_style(spec: PromptSpec, zh: bool) -> str:
    values = {**_mt2_values(spec, zh), "{target_style}": _required(spec.style, "style", "style")}
    return fill(T.MT2_STYLE_ZH if zh else T.MT2_STYLE_EN, values)


def _mt2_personalization(spec: PromptSpec, zh: bool) -> str:
    _require(spec.preferences, "preferences", "personalization")
    head, line, last = (
        (T.MT2_PERSONAL_HEAD_ZH, T.MT2_PERSONAL_LINE_ZH, T.MT2_PERSONAL_LAST_ZH)
        if zh
        else (T.MT2_PERSONAL_HEAD_EN, T.MT2_PERSONAL_LINE_EN, T.MT2_PERSONAL_LAST_EN)
    )
    values = _mt2_values(spec, zh)
    lines = [fill(line, {"{n}": str(i), "{user_preferences}": p}) for i, p in enumerate(spec.preferences, 1)]
    final = fill(last, {**values, "{n}": str(len(lines) + 1)})
    return "\n".join([fill(head, values), *lines, final])


def _mt2_structured(spec: PromptSpec, zh: bool) -> str:
    values = {**_mt2_values(spec, zh), "{format_type}": _required(spec.format_type, "format_type", "structured")}
    if not zh:
        return fill(T.MT2_STRUCTURED_EN, values)
    # The published Chinese text has {source_text} in its first line too, where the English one
    # says "the following data": that first one names the input section, not the data
    # (docs/reference/models.md §7.4-6), so the data goes in once, under its heading.
    head, data_heading, tail = T.MT2_STRUCTURED_ZH.partition(STRUCTURED_DATA_HEADING_ZH)
    return fill(head, {**values, "{source_text}": STRUCTURED_DATA_NAME_ZH}) + data_heading + fill(tail, values)


def _mt2_background(spec: PromptSpec, zh: bool) -> str:
    values = {**_mt2_values(spec, zh), "{background_text}": _required(spec.context, "context", "context")}
    return fill(T.MT2_BACKGROUND_ZH if zh else T.MT2_BACKGROUND_EN, values)


_BUILDERS: dict[tuple[str, str], Callable[[PromptSpec, bool], str]] = {
    ("hunyuan-mt", "default"): _hmt_default,
    ("chimera", "default"): _hmt_default,
    ("chimera", "fusion"): _fusion,
    ("hy-mt1.5", "default"): _hymt15_default,
    ("hy-mt1.5", "terminology"): _hymt15_terminology,
    ("hy-mt1.5", "context"): _hymt15_context,
    ("hy-mt1.5", "formatted"): _hymt15_formatted,
    ("hy-mt2", "default"): _mt2_simple(T.MT2_DEFAULT_ZH, T.MT2_DEFAULT_EN),
    ("hy-mt2", "terminology"): _mt2_terminology,
    ("hy-mt2", "context"): _mt2_background,
    ("hy-mt2", "style"): _mt2_style,
    ("hy-mt2", "personalization"): _mt2_personalization,
    ("hy-mt2", "delimiters"): _mt2_simple(T.MT2_DELIMITERS_ZH, T.MT2_DELIMITERS_EN),
    ("hy-mt2", "structured"): _mt2_structured,
}
