"""decode_text: UTF-8 with its byte-order mark kept aside, and clear errors."""
from __future__ import annotations

import pytest

from hymt.documents.text_document import LineIndex, decode_text
from hymt.errors import InvalidDocumentError, InvalidInputError


def test_a_bom_is_set_aside():
    assert decode_text("\ufeffHallo".encode(), "text") == ("Hallo", True)
    assert decode_text(b"Hallo", "text") == ("Hallo", False)


def test_undecodable_bytes_name_the_format_and_the_place():
    with pytest.raises(InvalidDocumentError) as err:
        decode_text(b"ok \xff\xfe", "markdown")
    assert "markdown document is not valid UTF-8: byte 3" in str(err.value)
    assert err.value.field == "file"


def test_a_string_is_refused():
    with pytest.raises(InvalidInputError, match="must be bytes, got str"):
        decode_text("text", "html")  # type: ignore[arg-type]


def test_line_numbers():
    lines = LineIndex("a\nbc\n\nd")
    assert [lines.line(i) for i in (0, 1, 2, 4, 5, 6)] == [1, 1, 2, 2, 3, 4]
