"""Render an OpenAI message list into the model input (special tokens included).

One user turn goes through `ModelFamily.render_chat` (the checkpoint's own template, or the
family's built-in format: byte-identical to what the model was trained with). Longer
conversations need the checkpoint's jinja template with the whole list; without one they
are folded into one user turn (the built-in formats know only a single turn).
"""
from __future__ import annotations

import functools
import json
from typing import Any, NoReturn

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from hymt.families.chat_format import special_tokens
from hymt.server.errors import ApiError


def render_messages(family: Any, checkpoint: Any, messages: list[dict[str, str]]) -> str:
    """The prompt string for `messages` ([{role, content}], content already plain text)."""
    if len(messages) == 1 and messages[0]["role"] == "user":
        return family.render_chat(messages[0]["content"], checkpoint)
    template = getattr(checkpoint, "chat_template", None)
    if template:
        return _render_jinja(template, messages, family.add_generation_prompt, checkpoint)
    return family.render_chat(_fold(messages), checkpoint)


def _fold(messages: list[dict[str, str]]) -> str:
    """Several turns as one user text, for formats that have a single turn."""
    if all(m["role"] in ("system", "user") for m in messages):
        return "\n\n".join(m["content"] for m in messages if m["content"])
    return "\n\n".join(f"{m['role'].capitalize()}: {m['content']}" for m in messages if m["content"])


@functools.lru_cache(maxsize=4)
def _compile(template: str) -> jinja2.Template:
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = lambda value, **kw: json.dumps(value, ensure_ascii=False)
    env.globals["raise_exception"] = _raise
    return env.from_string(template)


def _raise(message: str) -> NoReturn:
    raise jinja2.exceptions.TemplateError(message)


def _render_jinja(template: str, messages: list[dict[str, str]], add_generation_prompt: bool, checkpoint: Any) -> str:
    tokens = special_tokens(getattr(checkpoint, "tokenizer_config", {}) or {})
    try:
        compiled = _compile(template)
        return compiled.render(messages=messages, add_generation_prompt=add_generation_prompt,
                                         tools=None, documents=None, **tokens)
    except jinja2.exceptions.TemplateError as exc:
        raise ApiError(400, f"the model's chat template cannot render these messages: {exc}",
                       field="messages") from None
