"""The table of formats: the text formats by name and by file suffix."""
from __future__ import annotations

import pytest

from hymt.documents.registry import format_for_filename, format_names, get_format
from hymt.errors import InvalidDocumentError, InvalidInputError


def test_text_formats_are_registered():
    assert {"text", "markdown", "html"} <= set(format_names(text_only=True))
    assert get_format(" Markdown ").name == "markdown"
    assert [format_for_filename(n).name for n in ("a.md", "b.HTML", "c.htm", "d.txt", "e.markdown")] == [
        "markdown", "html", "html", "text", "markdown",
    ]


def test_unknown_names_and_suffixes_list_the_valid_ones():
    with pytest.raises(InvalidInputError, match="valid: .*markdown"):
        get_format("rtf")
    with pytest.raises(InvalidDocumentError, match=r"supported: .*\.md"):
        format_for_filename("a.rtf")
