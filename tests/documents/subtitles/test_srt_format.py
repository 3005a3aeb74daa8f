"""SubRip: one unit per cue, inline markup as tags, context across a sentence cut over cues,
byte-exact identity (fixtures and random files), and translations read back by pysubs2 with
the same cues and timings."""
from __future__ import annotations

import io
import random
import re

import pysubs2
import pytest
from marking import mark_tree, unmark
from subtitle_answers import careless, random_file, scrambled

from hymt.documents.inline_tags import parse_tree
from hymt.documents.registry import format_for_filename
from hymt.documents.subtitles import srt_format
from hymt.documents.units import TagNode
from hymt.errors import InvalidDocumentError

DIALOGUE = """1
00:00:01,000 --> 00:00:03,200
<i>Previously on the show...</i>

2
00:00:04,000 --> 00:00:06,500
- Where are you going?
- Home. It's late.

3
00:00:07,000 --> 00:00:09,000
I never thought that we

4
00:00:09,100 --> 00:00:11,000
would see him again

5
00:00:11,100 --> 00:00:13,000
after all these years.

6
00:00:14,000 --> 00:00:16,000
<font color="#ffff00">{\\an8}[DOOR SLAMS]</font>

7
00:00:17,000 --> 00:00:19,000
♪ ♪

8
00:00:20,000 --> 00:00:22,000
<b>Look</b>, it's <i>him
over there</i>!
"""

#: A timing line as pysubs2 and ffmpeg read one: two timestamps around an arrow.
TIMING_LINE = re.compile(r"\s*\d+:\d+:\d+[,.]\d+\s*-->\s*\d+:\d+:\d+[,.]\d+")

EXPECTED_UNITS = [
    ("<s1>Previously on the show...</s1>", "", "cue 1"),
    ("- Where are you going?<s1/>- Home. It's late.", "", "cue 2"),
    ("I never thought that we", "", "cue 3"),
    ("would see him again", "I never thought that we", "cue 4"),
    ("after all these years.", "I never thought that we would see him again", "cue 5"),
    ("<s1><s2/>[DOOR SLAMS]</s1>", "", "cue 6"),
    ("<s1>Look</s1>, it's <s2>him<s3/>over there</s2>!", "", "cue 8"),
]


def _events(data: bytes) -> list[pysubs2.SSAEvent]:
    """The file's cues as pysubs2 reads them (from a file opened in text mode, as it does)."""
    text = io.StringIO(data.decode("utf-8-sig"), newline=None)
    return list(pysubs2.SSAFile.from_file(text, format_="srt"))


def _timings(data: bytes) -> list[tuple[int, int]]:
    return [(event.start, event.end) for event in _events(data)]


@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_units_one_per_cue_with_tags_and_context(eol):
    units = srt_format.parse(DIALOGUE.replace("\n", eol).encode()).units
    assert [(u.text, u.context, u.where) for u in units] == EXPECTED_UNITS
    assert all(not u.split for u in units)


@pytest.mark.parametrize("eol", ["\n", "\r\n"])
@pytest.mark.parametrize("bom", ["", "\ufeff"])
def test_identity_is_byte_exact(identity, eol, bom):
    data = (bom + DIALOGUE.replace("\n", eol)).encode()
    assert identity(srt_format.parse(data)) == data


def test_marked_translation_keeps_cues_timings_and_markup(marked):
    data = DIALOGUE.replace("\n", "\r\n").encode()
    out = marked(srt_format.parse(data))
    assert _timings(out) == _timings(data)
    events = _events(out)
    assert [unmark(e.text) for e in events] == [e.text for e in _events(data)]
    assert events[2].text == "«I never thought that we»"
    text = out.decode()
    assert "2\r\n00:00:04,000 --> 00:00:06,500\r\n«- Where are you going?»\r\n«- Home. It's late.»\r\n" in text
    assert '<font color="#ffff00">{\\an8}«[DOOR SLAMS]»</font>' in text
    assert "♪ ♪" in text and "«♪" not in text  # no letter: not sent
    assert "<b>«Look»</b>«, it's »<i>«him»\r\n«over there»</i>«!»" in text


def test_answer_with_blank_lines_stays_inside_its_cue():
    """The old SRT support let a translation's blank line end the cue: the rest of the
    answer became text outside any cue and the cue count changed."""
    data = DIALOGUE.encode()
    document = srt_format.parse(data)
    trees = [parse_tree(u.text) for u in document.units]
    trees[2] = ("\n\nIch hätte nie gedacht,\n\n\ndass wir\n",)
    trees[1] = ("- Wohin gehst du?\n \n", TagNode(1, (), void=True), "\n- Nach Hause.")
    out = document.render(trees)
    assert _timings(out) == _timings(data)
    events = _events(out)
    assert events[2].text == "Ich hätte nie gedacht,\\Ndass wir"
    assert events[1].text == "- Wohin gehst du?\\N- Nach Hause."
    assert "\n\n\n" not in out.decode()


def test_careless_answers_never_change_the_cues():
    rng = random.Random(7)
    data = DIALOGUE.encode()
    document = srt_format.parse(data)
    for _ in range(50):
        out = document.render([careless(mark_tree(parse_tree(u.text)), rng) for u in document.units])
        assert _timings(out) == _timings(data)
        assert [u.where for u in srt_format.parse(out).units] == [u.where for u in document.units]


def test_old_defects_markup_is_tagged_not_sent_raw():
    """The old support sent `<i>Bye!</i>` to the model as it was."""
    units = srt_format.parse(b"10\n00:01:03,000 --> 00:01:04,000\n<i>Bye!</i>\n").units
    assert [u.text for u in units] == ["<s1>Bye!</s1>"]


def test_context_only_for_cues_that_continue():
    """The old SRT support translated every cue alone, without the cues before it."""
    data = (
        b"1\n00:00:01,000 --> 00:00:02,000\nHe said\n\n"
        b"2\n00:00:02,000 --> 00:00:03,000\nit was fine.\n\n"
        b"3\n00:00:03,000 --> 00:00:04,000\nIt was not!\n\n"
        b"4\n00:00:04,000 --> 00:00:05,000\n...or was it?\n\n"
        b"5\n00:00:05,000 --> 00:00:06,000\n\"Yes.\"\n\n"
        b"6\n00:00:06,000 --> 00:00:07,000\nNo.\n"
    )
    units = srt_format.parse(data).units
    assert [u.context for u in units] == ["", "He said", "", "It was not!", "", ""]


def test_malformed_timings_indices_and_stray_text_keep_their_bytes(identity):
    data = (
        b"Subtitles by someone\n\n"
        b"1\n00:00:01.000-->00:00:02\nFirst cue\n\n"
        b"x\n--> 00:00:03,000\nNo start time\n\n"
        b"00:00:04,000 --> 00:00:05,000 X1:40 X2:600 Y1:20 Y2:50\nNo index\n\n\n\n"
        b"Stray text after a blank line\n\n"
        b"8\nA cue without its timing line\n\n"
        b"4\n00:00:06,000 --> 00:00:07,000\n"
        b"5\n00:00:08,000 --> 00:00:09,000\nAfter an empty cue\n"
        b"6\n00:00:09,000 --> 00:00:10,000\nNo blank line before\n"
        b"7\n00:00:11,000 --> 00:00:12,000\nUnterminated cue"
    )
    document = srt_format.parse(data)
    assert [(u.text, u.where) for u in document.units] == [
        ("First cue", "cue 1"), ("x", "line 7"), ("No start time", "cue 2"), ("No index", "cue 3"),
        ("Stray text after a blank line", "line 16"), ("8<s1/>A cue without its timing line", "line 18"),
        ("After an empty cue", "cue 5"),
        ("No blank line before", "cue 6"), ("Unterminated cue", "cue 7"),
    ]
    assert identity(document) == data


def test_text_looking_like_a_tag_is_kept_exactly(identity):
    data = b"1\n00:00:01,000 --> 00:00:02,000\nType <s1> and visit https://example.com/a now\n"
    document = srt_format.parse(data)
    assert document.units[0].text == "Type <s1/> and visit <s2/> now"
    assert identity(document) == data


@pytest.mark.parametrize("data, message", [
    (b"just some text\nwithout any cue\n", "srt: no cue timing line"),
    (b"1\n00:00:01,000 --> 00:00:02,000\nOl\xe1\n", "srt: line 3 is not UTF-8"),
    (b"", "srt: the file is empty"),
])
def test_unreadable_files_are_refused(data, message):
    with pytest.raises(InvalidDocumentError, match=message):
        srt_format.parse(data)


SRT_LINES = [
    "1", "2", "17", "00:00:01,000 --> 00:00:02,000", "00:00:01.000-->00:00:02", "--> 00:00:03,000",
    "0:0:1,0 --> 0:0:2,0 X1:1", "Hello there.", "<i>italic starts", "and ends</i>", "<b>bold</b> <u>u</u>",
    '<font color="red">red</font>', "{\\an8}top", "<s1>literal</s1> <s2/>", "- speaker dash", "and lower case",
    "...ellipsis", "", "   ", "\t", "♪", "12:34", "see https://example.com/a?b=c", "<br>", "{not override}",
    "a < b > c", "&amp; &lt;", "über 漢字", "--> arrow text",
]


def test_random_files_identity_and_structure(identity):
    rng = random.Random(20240521)
    checked = 0
    for _ in range(300):
        data = random_file(rng, [], SRT_LINES, rng.randrange(1, 30)).encode()
        try:
            document = srt_format.parse(data)
        except InvalidDocumentError as exc:
            assert "no cue timing line" in str(exc)
            continue
        checked += 1
        assert identity(document) == data
        out = document.render([careless(mark_tree(parse_tree(u.text)), rng) for u in document.units])
        assert [u.where.split()[0] for u in srt_format.parse(out).units] == [
            u.where.split()[0] for u in document.units
        ]
        out = document.render([scrambled(parse_tree(u.text), rng) for u in document.units])
        assert _timing_lines(out) == _timing_lines(data)
        assert {u.where for u in srt_format.parse(out).units if u.where.startswith("cue")} <= {
            u.where for u in document.units
        }
    assert checked > 200


def _timing_lines(data: bytes) -> list[str]:
    """The lines every SubRip reader takes for timings."""
    return [line for line in data.decode().replace("\r\n", "\n").replace("\r", "\n").split("\n")
            if TIMING_LINE.match(line.lstrip("\ufeff"))]


def test_translated_timing_line_is_defused():
    data = b"1\n00:00:01,000 --> 00:00:02,000\nHello\nthere\n\n2\n00:00:03,000 --> 00:00:04,000\nBye\n"
    document = srt_format.parse(data)
    out = document.render([("Hallo\n12\n5 --> 6 da",), ("Tschüss --> 2",)])
    assert "\nHallo\n12\n5 → 6 da\n\n2\n" in out.decode() and "\nTschüss --> 2\n" in out.decode()
    assert [u.where for u in srt_format.parse(out).units] == ["cue 1", "cue 2"]
    assert _timings(out) == _timings(data)


def test_large_file(identity):
    cue = "{n}\n00:00:01,000 --> 00:00:02,000\n<i>Line {n} of the file,</i>\nand its second line\n\n"
    data = "".join(cue.format(n=n) for n in range(1, 5001)).encode()
    document = srt_format.parse(data)
    assert len(document.units) == 5000
    assert identity(document) == data


def test_registered_by_suffix():
    """Subtitles are a document format of their own now, beside the old pipeline format."""
    assert format_for_filename("Movie.EN.SRT") is srt_format.FORMAT
    assert srt_format.FORMAT.text
