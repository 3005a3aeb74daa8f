"""Stand-in translations for the format tests: one that marks every piece of text, so the
output shows what was translated (and that nothing was translated twice), and the identity."""
from __future__ import annotations

import pytest
from marking import mark_tree

from hymt.documents.inline_tags import parse_tree
from hymt.documents.units import ParsedDocument


@pytest.fixture
def marked():
    """The document rendered with every text node marked."""
    def render(document: ParsedDocument, **kwargs: str) -> bytes:
        trees = [mark_tree(parse_tree(unit.text)) for unit in document.units]
        if "target_language" in kwargs:
            return document.render_for(trees, kwargs["target_language"])
        return document.render(trees)

    return render


@pytest.fixture
def identity():
    """The document rendered with each unit's own text as its translation."""
    def render(document: ParsedDocument) -> bytes:
        return document.render([parse_tree(unit.text) for unit in document.units])

    return render
