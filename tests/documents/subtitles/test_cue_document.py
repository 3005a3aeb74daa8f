"""Writing translated cue text: blank lines folded, line breaks replaced."""
from __future__ import annotations

import pytest

from hymt.documents.subtitles.cue_document import fold_blank_lines, replace_line_breaks


@pytest.mark.parametrize("text, expected", [
    ("a\nb", "a\nb"),
    ("a\n\nb", "a\nb"),
    ("a\r\n  \r\n\tb", "a\r\n\tb"),
    ("a\r\n\r\nb", "a\r\nb"),
    ("\n\n a\n \n", " a"),
    ("a  \nb", "a  \nb"),
    ("<i>a\n</i>\nb", "<i>a\n</i>\nb"),
    ("a\r\rb", "a\rb"),
])
def test_fold_blank_lines(text, expected):
    assert fold_blank_lines(text) == expected


def test_replace_line_breaks():
    assert replace_line_breaks("a\nb\r\n\r\nc\rd", "\\N") == "a\\Nb\\Nc\\Nd"
    assert replace_line_breaks("a\n \nb", "\r\n") == "a\r\nb"
