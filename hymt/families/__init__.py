"""Model families: chat format, stop ids, sampling defaults and prompt templates per model.

    family = detect_family(checkpoint)              # or get_family("HY-MT1.5-1.8B")
    user = build_prompt(family, PromptSpec("Hello", target="zh"))
    model_input = family.render_chat(user, checkpoint)
"""
from hymt.families.chat_format import ChatFormat
from hymt.families.family import ModelFamily
from hymt.families.prompt_spec import TEMPLATE_NAMES, PromptSpec, canonical_template
from hymt.families.prompts import build_prompt, uses_chinese_template
from hymt.families.registry import DEFAULT_MODEL, FAMILIES, detect_family, family_names, get_family

__all__ = [
    "DEFAULT_MODEL",
    "FAMILIES",
    "TEMPLATE_NAMES",
    "ChatFormat",
    "ModelFamily",
    "PromptSpec",
    "build_prompt",
    "canonical_template",
    "detect_family",
    "family_names",
    "get_family",
    "uses_chinese_template",
]
