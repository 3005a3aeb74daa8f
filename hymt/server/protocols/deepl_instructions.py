"""DeepL's formality, style_id, custom_instructions and context on the model family's templates.

- `custom_instructions` need a personalization template (Hy-MT2). Each instruction is one
  preference line; formality, style_id and the glossary terms the texts contain join as lines
  of their own, since the official templates do not combine and the personalization one is
  the only one that takes free-form requests. `context` is not used then.
- `style_id` names the target style itself (hymt keeps no style rule lists) and needs a
  style template (Hy-MT2); formality is added to it.
- `formality`: more / less need a style template (DeepL refuses them for a target without
  formality, in its own words); prefer_more / prefer_less fall back to the default there.
- `context` goes to the context template where the family has one, and is left out where it
  has none (Hunyuan-MT-7B), as DeepL's context is advice, not a requirement.

A family without the template a field needs gets DeepL's 400 for that field, naming the
family and the families that have it.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hymt.families import ModelFamily
from hymt.server.errors import ApiError
from hymt.server.protocols.deepl_request import DeepLTranslate, not_supported
from hymt.translate.glossary import Glossary, GlossaryIndex

_REGISTER = {"more": "formal", "prefer_more": "formal", "less": "informal", "prefer_less": "informal"}


@dataclass(frozen=True)
class StyleOptions:
    """The TranslateOptions fields DeepL's style fields become."""

    style: str | None = None
    template: str | None = None
    preferences: tuple[str, ...] = ()
    context: str | None = None


def style_options(family: ModelFamily, request: DeepLTranslate, glossary: Glossary) -> StyleOptions:
    """What `request`'s formality, style_id, custom_instructions and context become on `family`."""
    register = _REGISTER.get(request.formality)
    if request.custom_instructions:
        _require(family, "personalization", "custom_instructions")
        lines = list(request.custom_instructions)
        if request.style_id:
            lines.append(f"Write in this style: {request.style_id}.")
        if register:
            lines.append(f"Use {register} language.")
        lines += [f'Translate "{source}" as "{target}".' for source, target in _terms(request.texts, glossary)]
        return StyleOptions(template="personalization", preferences=tuple(lines))
    context = request.context if "context" in family.templates else None
    if request.style_id:
        _require(family, "style", "style_id")
        return StyleOptions(style=f"{request.style_id}, {register}" if register else request.style_id, context=context)
    if register and "style" in family.templates:
        return StyleOptions(style=register, context=context)
    if request.formality in ("more", "less"):
        raise ApiError(400, f"'formality' is not supported for given 'target_lang'. {family.name} has no style "
                            "template (the Hy-MT2 models have one); send prefer_more or prefer_less to fall back "
                            "to the default.", field="formality")
    return StyleOptions(context=context)


def supports_formality(family: ModelFamily) -> bool:
    return "style" in family.templates


def _require(family: ModelFamily, template: str, field: str) -> None:
    if template not in family.templates:
        raise not_supported(field, f"{family.name} has no {template} template, which {field} needs "
                                   f"(the Hy-MT2 models have one).")


def _terms(texts: Sequence[str], glossary: Glossary) -> Glossary:
    """The glossary entries any of `texts` contains, once each, in glossary order."""
    if not glossary:
        return ()
    index = GlossaryIndex(glossary)
    found = {pair for text in texts for pair in index.matches(text)}
    return tuple(pair for pair in glossary if pair in found)
