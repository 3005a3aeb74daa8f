"""Lines with their own endings; UTF-8 decoding that names the bad line."""
from __future__ import annotations

import pytest

from hymt.documents.subtitles.lines import decode, split_lines
from hymt.errors import InvalidDocumentError


def test_lines_keep_their_endings():
    text = "\ufeffa\r\nb\nc\rd\r\r\ne"
    lines = split_lines(text)
    assert [(line.body, line.eol) for line in lines] == [
        ("\ufeffa", "\r\n"), ("b", "\n"), ("c", "\r"), ("d", "\r"), ("", "\r\n"), ("e", ""),
    ]
    assert "".join(line.body + line.eol for line in lines) == text
    assert [text[line.start : line.end] for line in lines] == [line.body for line in lines]
    assert lines[4].blank and not lines[0].blank


def test_decode_keeps_the_bom_and_names_the_bad_line():
    assert decode("\ufeffWEBVTT".encode(), "vtt") == "\ufeffWEBVTT"
    with pytest.raises(InvalidDocumentError, match="srt: line 2 is not UTF-8"):
        decode(b"ok\n\x80\n", "srt")
