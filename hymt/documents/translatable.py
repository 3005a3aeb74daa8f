"""Which text is worth a model request: the one rule every format and the pipeline share.

Numbers, symbols, emoji, URLs, e-mail addresses, inline code, entities and placeholders pass
through as they are; anything with a letter outside them goes to the model.
"""
from __future__ import annotations

import re

_NOT_WORDS = re.compile(
    r"https?://\S+|www\.\S+|[\w.+-]+@[\w-]+\.[\w.]+|`[^`]*`|&#?\w+;|\{\{[^}]*\}\}|\$\{[^}]*\}|%[sd]",
)


def is_translatable(text: str) -> bool:
    """True when `text` has letters outside URLs, e-mail addresses, inline code, entities
    and placeholders."""
    stripped = _NOT_WORDS.sub("", text)
    return any(ch.isalpha() for ch in stripped)
