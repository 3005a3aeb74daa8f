"""Which text goes to the model."""
from __future__ import annotations

import pytest

from hymt.documents.translatable import is_translatable


@pytest.mark.parametrize(
    "text", ["1234 + 56 = 1290 !!", "https://example.com/a/b", "`pip install hymt`", "🙂 ✔", "&nbsp;", "{{name}}", ""]
)
def test_no_words(text):
    assert not is_translatable(text)


@pytest.mark.parametrize("text", ["Hello 42", "日本", "a.k.a.", "see https://x.y now"])
def test_words(text):
    assert is_translatable(text)
