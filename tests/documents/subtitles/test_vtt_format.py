"""WebVTT: header, NOTE, STYLE and REGION blocks, cue identifiers and settings kept byte for
byte; voice, class, language, ruby and timestamp tags; character references decoded for the
model and written back as the cue wrote them; translations read back by pysubs2 and by the
format's own reader."""
from __future__ import annotations

import io
import random

import pysubs2
import pytest
from marking import mark_tree, unmark
from subtitle_answers import careless, random_file, scrambled

from hymt.documents.inline_tags import parse_tree
from hymt.documents.registry import format_for_filename
from hymt.documents.subtitles import vtt_format
from hymt.documents.units import TagNode
from hymt.errors import InvalidDocumentError

CAPTIONS = """WEBVTT - Episode 3
Kind: captions
Language: en

STYLE
::cue(.yellow) { color: yellow; }

REGION
id:fred
width:40%

NOTE This file was made by hand.
It has two lines of notes.

intro
00:00:01.000 --> 00:00:03.000 align:start position:10%
<v Roger Bingham>We are in New York City

00:00:03.100 --> 00:00:05.000 region:fred line:0
<v Roger Bingham>and we're going to be talking
about <c.yellow>string theory</c>.

NOTE Cue 3 follows.

3
00:00:05.500 --> 00:00:07.000
<v.loud Neil>Tom &amp; Jerry &lt;3</v>
<lang fr>Bonjour</lang> <ruby>漢<rt>kan</rt></ruby>.

00:00:08.000 --> 00:00:10.000 vertical:rl
<00:00:08.000>Karaoke <00:00:09.000><i>style</i>&nbsp;timing!
"""

EXPECTED_UNITS = [
    ("<s1/>We are in New York City", "", "cue 1"),
    ("<s1/>and we're going to be talking<s2/>about <s3>string theory</s3>.", "We are in New York City", "cue 2"),
    ("<s1>Tom & Jerry <3</s1><s2/><s3>Bonjour</s3> <s4>漢<s5>kan</s5></s4>.", "", "cue 3"),
    ("<s1/>Karaoke <s2/><s3>style</s3>\u00a0timing!", "", "cue 4"),
]


def _events(data: bytes) -> list[pysubs2.SSAEvent]:
    text = io.StringIO(data.decode("utf-8-sig"), newline=None)
    return list(pysubs2.SSAFile.from_file(text, format_="vtt"))


def _timings(data: bytes) -> list[tuple[int, int]]:
    return [(event.start, event.end) for event in _events(data)]


def _arrow_lines(data: bytes, *, identifiers: bool = True) -> list[str]:
    """Timing lines with their cue settings, and the line before each (the identifier, where
    every cue has a blank line or an identifier before it)."""
    lines = data.decode().splitlines()
    return [f"{lines[i - 1] if identifiers else ''}|{line}" for i, line in enumerate(lines) if "-->" in line]


@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_units_one_per_cue_with_tags_and_context(eol):
    units = vtt_format.parse(CAPTIONS.replace("\n", eol).encode()).units
    assert [(u.text, u.context, u.where) for u in units] == EXPECTED_UNITS
    assert all(not u.split for u in units)


@pytest.mark.parametrize("eol", ["\n", "\r\n"])
@pytest.mark.parametrize("bom", ["", "\ufeff"])
def test_identity_is_byte_exact(identity, eol, bom):
    data = (bom + CAPTIONS.replace("\n", eol)).encode()
    assert identity(vtt_format.parse(data)) == data


def test_marked_translation_keeps_blocks_cues_timings_and_settings(marked):
    data = CAPTIONS.encode()
    out = marked(vtt_format.parse(data))
    assert _timings(out) == _timings(data)
    assert _arrow_lines(out) == _arrow_lines(data)
    text = out.decode()
    head = CAPTIONS[: CAPTIONS.index("intro")]
    assert text.startswith(head)  # header, STYLE, REGION and the first NOTE untouched
    assert "\nNOTE Cue 3 follows.\n\n3\n" in text
    assert "<v Roger Bingham>«and we're going to be talking»\n«about »<c.yellow>«string theory»</c>«.»" in text
    assert "<v.loud Neil>«Tom &amp; Jerry &lt;3»</v>\n" in text
    assert "<lang fr>«Bonjour»</lang> <ruby>«漢»<rt>«kan»</rt></ruby>«.»" in text
    assert "<00:00:08.000>«Karaoke »<00:00:09.000><i>«style»</i>«&nbsp;timing!»" in text
    assert [unmark(e.text) for e in _events(out)] == [e.text for e in _events(data)]
    assert [u.where for u in vtt_format.parse(out).units] == [u.where for u in vtt_format.parse(data).units]


def test_translated_text_is_escaped_for_webvtt():
    data = b"WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nTom &amp; Jerry\n\n00:00:02.000 --> 00:00:03.000\nA & B\n"
    document = vtt_format.parse(data)
    trees = [("Tom & Jerry <3 --> go",), ("C & D <i> -->",)]
    text = document.render(trees).decode()
    assert "\nTom &amp; Jerry &lt;3 --&gt; go\n" in text
    assert "\nC & D &lt;i> --&gt;\n" in text  # the cue wrote "&" bare: so does its translation
    assert len(vtt_format.parse(text.encode()).units) == 2


def test_answer_with_blank_lines_stays_inside_its_cue():
    data = CAPTIONS.encode()
    document = vtt_format.parse(data)
    trees = [parse_tree(u.text) for u in document.units]
    trees[0] = (TagNode(1, (), void=True), "\n\nWir sind in\n\n\nNew York City\n\n")
    out = document.render(trees)
    assert _timings(out) == _timings(data)
    assert _events(out)[0].text == "Wir sind in\\NNew York City"
    assert "<v Roger Bingham>Wir sind in\nNew York City\n\n00:00:03.100" in out.decode()


def test_careless_answers_never_change_the_cues():
    rng = random.Random(11)
    data = CAPTIONS.encode()
    document = vtt_format.parse(data)
    for _ in range(50):
        out = document.render([careless(mark_tree(parse_tree(u.text)), rng) for u in document.units])
        assert _timings(out) == _timings(data)
        assert _arrow_lines(out) == _arrow_lines(data)
        assert [u.where for u in vtt_format.parse(out).units] == [u.where for u in document.units]


def test_references_the_cue_also_writes_bare_are_kept_as_tags(identity):
    data = (
        b"WEBVTT\n\n00:01.000 --> 00:02.000\nA & B &amp; C &#38; D &gt; &#x3E; &eacute;&bogus;\n\n"
        b"00:02.000 --> 00:03.000\n&lt;s1&gt; &amp; more\n"
    )
    document = vtt_format.parse(data)
    assert [u.text for u in document.units] == [
        "A & B <s1/> C <s2/> D > <s3/> é&bogus;",
        # decoded, "&lt;s1&gt;" would read as a tag: this cue keeps every reference as a tag
        "<s1/>s1<s2/> <s3/> more",
    ]
    assert identity(document) == data


def test_text_after_a_cue_without_blank_line_and_arrow_lines(identity):
    data = (
        b"WEBVTT\n\nNOTE\n-->\n\n00:01.000 --> 00:02.000\nFirst line\n"
        b"00:02.000 --> 00:03.000\nSecond cue\n\nstray block, ignored by players\n\n"
        b"id\n00:03.000 --> 00:04.000\n\n00:04.000 --> 00:05.000\nlast cue without line end"
    )
    document = vtt_format.parse(data)
    assert [(u.text, u.where) for u in document.units] == [
        ("First line", "cue 2"), ("Second cue", "cue 3"), ("last cue without line end", "cue 5"),
    ]
    assert identity(document) == data


@pytest.mark.parametrize("data, message", [
    (b"1\n00:00:01,000 --> 00:00:02,000\nAn SRT file\n", "vtt: line 1 must start with WEBVTT"),
    (b"WEBVTTX\n", "vtt: line 1 must start with WEBVTT"),
    (b"WEBVTT\n\n00:01.000 --> 00:02.000\n\xff\xfe\n", "vtt: line 4 is not UTF-8"),
])
def test_unreadable_files_are_refused(data, message):
    with pytest.raises(InvalidDocumentError, match=message):
        vtt_format.parse(data)


VTT_LINES = [
    "NOTE a note", "NOTE", "STYLE", "::cue { color: red }", "REGION", "id:r width:40%", "cue-7",
    "00:01.000 --> 00:02.000 align:start position:10%", "00:00:03.000 --> 00:00:04.000", "00:05.000-->",
    "<v Bob>Hi there", "<v Bob>Bye</v>", "<c.yellow.big>Yellow</c>", "<lang en>hello</lang>",
    "<ruby>漢<rt>kan</rt></ruby>", "<00:00:01.500>timed <i>words", "end</i> of it", "<b>bold</b>",
    "&amp; &lt; &gt; &nbsp; &lrm; &#39; &eacute; &foo; &#x1F600;", "Tom & Jerry", "a < b", "&lt;s1&gt;",
    "<s1>", "<s2/>", "", " ", "\t", "text with -- dashes", "and lower case", "...more", "über 漢字",
    "https://example.com/?a=1&amp;b=2", "WEBVTT",
]


def test_random_files_identity_and_structure(identity):
    rng = random.Random(5)
    for _ in range(300):
        head = [rng.choice(["WEBVTT", "WEBVTT - title", "WEBVTT\tx"])]
        data = random_file(rng, head, VTT_LINES, rng.randrange(0, 30)).encode()
        document = vtt_format.parse(data)
        assert identity(document) == data
        out = document.render([careless(mark_tree(parse_tree(u.text)), rng) for u in document.units])
        assert _arrow_lines(out, identifiers=False) == _arrow_lines(data, identifiers=False)
        assert [u.where for u in vtt_format.parse(out).units] == [u.where for u in document.units]
        out = document.render([scrambled(parse_tree(u.text), rng) for u in document.units])
        assert _arrow_lines(out, identifiers=False) == _arrow_lines(data, identifiers=False)
        assert {u.where for u in vtt_format.parse(out).units} <= {u.where for u in document.units}


def test_registered_by_suffix():
    """The old subtitle support read SRT only: a .vtt file was refused or read as plain text."""
    assert format_for_filename("talk.en.vtt") is vtt_format.FORMAT
    assert vtt_format.FORMAT.text
