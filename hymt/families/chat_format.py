"""Chat formatting: a checkpoint's own jinja chat template, or a family's built-in format.

The jinja path mirrors what `transformers` `apply_chat_template` does (sandboxed environment,
trim_blocks/lstrip_blocks, the tokenizer's special tokens as variables), so the string we
tokenize is the one the model was trained and documented with (docs/reference/models.md §5.3 rule).
"""
from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import NoReturn

import jinja2
import jinja2.nodes
import jinja2.parser
from jinja2.ext import Extension
from jinja2.sandbox import ImmutableSandboxedEnvironment

from hymt.errors import ModelLoadError


@dataclass(frozen=True)
class ChatFormat:
    """A built-in one-user-turn format, used when a checkpoint ships no chat template.

    The rendered input is `prefix + user_text + suffix` (suffix = end of the user turn plus
    the generation prompt the family's README uses).
    """

    prefix: str
    suffix: str

    def render(self, user_text: str) -> str:
        return self.prefix + user_text + self.suffix


class _GenerationTag(Extension):
    """Accepts `{% generation %}...{% endgeneration %}` (assistant-mask markers) and renders the body."""

    tags = {"generation"}

    def parse(self, parser: jinja2.parser.Parser) -> jinja2.nodes.Node:
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_render_body"), [], [], body).set_lineno(lineno)

    def _render_body(self, caller: Callable[[], str]) -> str:
        return caller()


def _raise_exception(message: str) -> NoReturn:
    raise jinja2.exceptions.TemplateError(message)


def _tojson(value: object, ensure_ascii: bool = False, indent: int | None = None,
            separators: tuple[str, str] | None = None, sort_keys: bool = False) -> str:
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _strftime_now(fmt: str) -> str:
    return datetime.now().strftime(fmt)


@functools.lru_cache(maxsize=16)
def _compile(template: str) -> jinja2.Template:
    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[_GenerationTag, "jinja2.ext.loopcontrols"]
    )
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    return env.from_string(template)


def special_tokens(tokenizer_config: Mapping) -> dict[str, object]:
    """The special-token variables a chat template sees (`bos_token`, `eos_token`, ...).

    tokenizer_config.json stores tokens as strings or as AddedToken dicts (`{"content": ...}`).
    """
    tokens: dict[str, object] = {}
    for key, value in tokenizer_config.items():
        if key.endswith("_token"):
            text = _token_text(value)
            if text is not None:
                tokens[key] = text
        elif key in ("additional_special_tokens", "extra_special_tokens") and isinstance(value, list):
            tokens[key] = [t for t in (_token_text(v) for v in value) if t is not None]
    return tokens


def _token_text(value: object) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("content"), str):
        return value["content"]
    return None


def render_jinja(
    template: str, user_text: str, *, add_generation_prompt: bool, tokens: Mapping[str, object]
) -> str:
    """Render a chat template for one user message, as `apply_chat_template(tokenize=False)` does."""
    try:
        return _compile(template).render(
            messages=[{"role": "user", "content": user_text}],
            add_generation_prompt=add_generation_prompt,
            tools=None,
            documents=None,
            **tokens,
        )
    except jinja2.exceptions.TemplateError as exc:
        raise ModelLoadError(f"the checkpoint's chat template failed to render: {exc}") from exc
