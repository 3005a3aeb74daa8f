"""Lines with their own endings; UTF-8 decoding that names the bad line."""
from __future__ import annotations

import pytest

from hymt.documents import safety
from hymt.documents.subtitles import ass_format, srt_format, vtt_format
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
    with pytest.raises(InvalidDocumentError, match="ass: the file is UTF-16 text; save it as UTF-8"):
        decode("[Script Info]".encode("utf-16"), "ass")


@pytest.mark.parametrize("parse", [srt_format.parse, vtt_format.parse, ass_format.parse])
def test_files_over_the_size_limit_are_refused(monkeypatch, parse):
    monkeypatch.setattr(safety, "MAX_DOCUMENT_BYTES", 1000)
    data = b"WEBVTT\n\n" + b"00:01.000 --> 00:02.000\nSome text\n\n" * 40
    with pytest.raises(InvalidDocumentError, match=r"the file has \d+ bytes, more than the limit of 1000"):
        parse(data)
