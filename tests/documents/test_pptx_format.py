"""PPTX: a deck built with python-pptx (titles, bullets with formatting and a link, a group, a
table, notes), its units, a marked translation and the identity, read back with python-pptx."""
from __future__ import annotations

import io

import pptx
import pytest
from pptx.util import Inches, Pt

from hymt.documents import pptx_format


def build_deck() -> bytes:
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Quarterly results"
    body = slide.placeholders[1].text_frame
    body.text = "Revenue grew by "
    strong = body.paragraphs[0].add_run()
    strong.text = "twelve percent"
    strong.font.bold = True
    strong.font.size = Pt(28)
    tail = body.paragraphs[0].add_run()
    tail.text = " this quarter, mostly in Europe and Asia."
    second = body.add_paragraph()
    second.text = "Details on"
    second.level = 1
    link = second.add_run()
    link.text = " our site"
    link.hyperlink.address = "https://example.com"
    third = body.add_paragraph()
    third.text = "First line\vsecond line"
    body.add_paragraph().text = " "
    group = slide.shapes.add_group_shape()
    group.shapes.add_textbox(0, 0, Inches(2), Inches(1)).text_frame.text = "Inside a group"
    table = slide.shapes.add_table(2, 2, Inches(1), Inches(4), Inches(4), Inches(1)).table
    table.cell(0, 0).text = "Region"
    table.cell(0, 1).text = "2024"
    table.cell(1, 0).text = "North America"
    slide.notes_slide.notes_text_frame.text = "Mention the new office."
    second_slide = deck.slides.add_slide(deck.slide_layouts[5])
    second_slide.shapes.title.text = "Thank you"
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def _paragraphs(data: bytes) -> list[tuple[str, list[tuple[str, bool | None, str | None]]]]:
    """(where, runs as (text, bold, link)) of every paragraph on every slide and notes page."""
    deck = pptx.Presentation(io.BytesIO(data))
    found = []
    for number, slide in enumerate(deck.slides):
        frames = []
        for shape in slide.shapes:
            shapes = shape.shapes if shape.shape_type == 6 else [shape]  # 6: a group
            for inner in shapes:
                if inner.has_text_frame:
                    frames.append(inner.text_frame)
                if getattr(inner, "has_table", False) and inner.has_table:
                    frames += [cell.text_frame for row in inner.table.rows for cell in row.cells]
        if slide.has_notes_slide:
            frames.append(slide.notes_slide.notes_text_frame)
        for frame in frames:
            for paragraph in frame.paragraphs:
                found.append((f"slide {number}", [(r.text, r.font.bold, r.hyperlink.address)
                                                  for r in paragraph.runs]))
    return found


@pytest.fixture(scope="module")
def source() -> bytes:
    return build_deck()


def test_units_cover_shapes_groups_tables_and_notes(source):
    texts = [unit.text for unit in pptx_format.parse(source).units]
    assert texts == [
        "Quarterly results",
        "Revenue grew by <s1>twelve percent</s1> this quarter, mostly in Europe and Asia.",
        "Details on<s1> our site</s1>",
        "First line<s1/>second line",
        "Inside a group",
        "Region",
        "North America",
        "Mention the new office.",
        "Thank you",
    ]


def test_marked_translation_keeps_formatting_links_and_structure(source, marked):
    out = marked(pptx_format.parse(source))
    before, after = _paragraphs(source), _paragraphs(out)
    assert len(before) == len(after)
    for (_, old), (_, new) in zip(before, after):
        old_text = "".join(text for text, _, _ in old)
        new_text = "".join(text for text, _, _ in new)
        assert new_text.replace("«", "").replace("»", "") == old_text
        if any(c.isalpha() for c in old_text):
            assert new_text.count("«") >= 1
    runs = {text: (bold, address) for _, paragraph in after for text, bold, address in paragraph}
    assert runs["«twelve percent»"][0] is True
    assert runs["«Revenue grew by »"][0] is None
    assert runs["« our site»"][1] == "https://example.com"
    assert runs["«2024»" if "«2024»" in runs else "2024"] == (None, None)
    deck = pptx.Presentation(io.BytesIO(out))
    assert deck.slides[0].placeholders[1].text_frame.paragraphs[1].level == 1
    assert deck.slides[0].placeholders[1].text_frame.paragraphs[0].runs[1].font.size == Pt(28)
    assert len(deck.slides) == 2


def test_identity_translation_gives_back_the_text(source, identity):
    out = identity(pptx_format.parse(source))
    assert _paragraphs(out) == _paragraphs(source)
    assert pptx_format.parse(out).units == pptx_format.parse(source).units
