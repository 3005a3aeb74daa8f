"""Plain text: wrapped prose joined into paragraphs, lines with meaning kept as lines."""
from __future__ import annotations

import random

import pytest
from format_samples import FUZZ_PIECES, assert_round_trips, fixture, identity, random_document, texts, translated

from hymt.documents.plain_text import FORMAT
from hymt.errors import InvalidDocumentError

FIXTURES = ("prose_en.txt", "prose_fr.txt", "prose_cjk.txt", "letter.txt")


@pytest.mark.parametrize("name", FIXTURES)
def test_fixtures_round_trip_byte_for_byte(name):
    assert_round_trips(FORMAT, fixture(name))


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"])
def test_line_endings_and_a_bom_round_trip(ending):
    data = ("\ufeff" + fixture("letter.txt").decode().replace("\n", ending)).encode()
    doc = assert_round_trips(FORMAT, data)
    assert texts(doc) == texts(FORMAT.parse(fixture("letter.txt")))
    assert doc.render(translated(doc)).startswith("\ufeffHARBOUR STREET".encode())


def test_random_documents_round_trip():
    rng = random.Random(7)
    for _ in range(300):
        assert_round_trips(FORMAT, random_document(rng, FUZZ_PIECES))


def test_a_wrapped_paragraph_is_one_unit_and_comes_back_as_one_line():
    doc = FORMAT.parse(fixture("prose_en.txt"))
    assert len(doc.units) == 2  # the old line-by-line parser sent 9 units
    assert doc.units[0].text.startswith("The harbour town woke slowly that winter. Fishing boats stayed tied")
    assert doc.units[0].text.endswith("plans for the old lighthouse.")
    assert doc.units[0].where == "paragraph, line 1"
    out = doc.render(translated(doc)).decode()
    assert out.split("\n\n")[0] == doc.units[0].text.upper()
    assert out.count("\n") == 3  # one line per paragraph, the blank line kept


def test_a_first_line_indent_is_kept_outside_the_unit():
    doc = FORMAT.parse(fixture("prose_fr.txt"))
    assert len(doc.units) == 1 and doc.units[0].text.startswith("La ville portuaire")
    assert "hiver-là. Les bateaux" in doc.units[0].text
    assert doc.render(translated(doc)).decode().startswith("    LA VILLE PORTUAIRE")


def test_cjk_lines_join_without_a_space():
    doc = FORMAT.parse(fixture("prose_cjk.txt"))
    assert [unit.text[:6] for unit in doc.units] == ["那年冬天，港", "その冬、港町"]
    assert "船主们每天上午坐在" in doc.units[0].text and " " not in doc.units[0].text
    assert "つながれたままで" in doc.units[1].text and " " not in doc.units[1].text


def test_korean_lines_join_with_a_space():
    line = "그해 겨울 항구 마을은 천천히 잠에서 깨어났다 어선들은 몇 주 동안이나 부두에"
    doc = FORMAT.parse(f"{line}\n{line}\n{line}\n짧은 줄.\n".encode())
    assert texts(doc) == [f"{line} {line} {line} 짧은 줄."]


def test_lines_with_meaning_keep_their_own_units():
    assert texts(FORMAT.parse(fixture("letter.txt"))) == [
        "Harbour Street Residents' Association",
        "12 Quay Road",
        "Port Ellen, PA42 7DX",
        "Dear Councillor Reid,",
        "We are writing on behalf of the residents of Harbour Street about the council's proposal to sell "
        "the old lighthouse. Most of us have lived here for more than twenty years, and the lighthouse is "
        "part of what makes the street a place people want to visit.",
        "Our requests are:",
        "Keep the lighthouse in public ownership.",
        "Publish the survey of the tower before any decision is taken, so that residents can read it for "
        "themselves.",
        "Hold a public meeting in the spring.",
        "The attendance at our last three meetings:",
        "Month       Residents   Visitors",
        "January     41          3",
        "February    38          5",
        "Settings we used for the online survey:",
        "A verse from the street's own song, which we sing every summer:",
        "The lamp is dark, the glass is gone,",
        "the keeper's door is shut;",
        "but still the ships come home at dawn",
        "to Harbour Street and Quay Road's hut.",
        "Yours sincerely,",
        "Mary Campbell",
        "Secretary",
    ]


def test_markers_and_code_stay_as_written():
    doc = FORMAT.parse(fixture("letter.txt"))
    out = doc.render(translated(doc)).decode()
    assert "\n1. KEEP THE LIGHTHOUSE IN PUBLIC OWNERSHIP.\n2. PUBLISH THE SURVEY" in out
    assert "    survey.url = https://example.com/survey\n    survey.closes = 2024-03-31;\n    max_answers: 500\n" in out
    assert "THE LAMP IS DARK, THE GLASS IS GONE,\nTHE KEEPER'S DOOR IS SHUT;\n" in out


def test_a_verse_document_is_never_joined():
    poem = "Roses are red,\nviolets are blue,\nsugar is sweet,\nand so are you.\n"
    assert texts(FORMAT.parse(poem.encode())) == poem.splitlines()


def test_unwrapped_long_lines_are_separate_paragraphs():
    line = "This paragraph was written as one long line, the way editors save text when nobody wraps it. " * 2
    doc = FORMAT.parse(f"{line}\n{line}\n{line}\n".encode())
    assert len(doc.units) == 3


def test_a_lone_marker_inside_a_paragraph_is_a_wrapped_word():
    text = (
        "  Developers that use the GNU GPL protect your rights with two steps:\n"
        "(1) assert copyright on the software, and (2) offer you this License\n"
        "giving you legal permission to copy, distribute and/or modify it.\n"
    )
    assert texts(FORMAT.parse(text.encode())) == [" ".join(line.strip() for line in text.splitlines())]


def test_a_word_split_by_a_hyphen_joins_without_a_space():
    text = (
        "The committee met in the old harbour office to discuss the well-\n"
        "known problem of the lighthouse, which had been closed for years now,\n"
        "and nobody knew what to do.\n"
    )
    assert "the well-known problem" in FORMAT.parse(text.encode()).units[0].text


def test_numbers_symbols_and_urls_are_not_units():
    doc = FORMAT.parse(b"Intro text.\n\n12:30\n\n---\n\nhttps://example.com/a\n")
    assert texts(doc) == ["Intro text."]


def test_text_that_looks_like_a_tag_is_not_one():
    doc = FORMAT.parse(b"Write <s1> to open a tag.\n")
    assert texts(doc) == ["Write <s1/> to open a tag."]
    assert doc.render(identity(doc)) == b"Write <s1> to open a tag.\n"


def test_invalid_utf8_is_an_error_naming_the_format():
    with pytest.raises(InvalidDocumentError, match="text document is not valid UTF-8"):
        FORMAT.parse(b"caf\xe9\n")
