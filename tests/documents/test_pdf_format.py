"""PDF: a document with a text layer built with fpdf2, its paragraphs as units, and the DOCX
it is rendered into, read back with python-docx."""
from __future__ import annotations

import io

import docx
import pytest
from fpdf import FPDF
from fpdf.enums import EncryptionMethod

from hymt.documents import pdf_format
from hymt.documents.registry import format_for_filename
from hymt.errors import InvalidDocumentError

LONG = ("This report describes the results of the survey we ran in the spring. It covers every region "
        "where the company sells its products and compares them with the previous year.")


def build_pdf() -> bytes:
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=24)
    pdf.cell(0, 12, "Annual Report", new_x="LMARGIN", new_y="NEXT")
    pdf.ln(4)
    pdf.set_font("Helvetica", size=11)
    pdf.multi_cell(0, 5, LONG, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(8)
    pdf.write(5, "Sales grew ")
    pdf.set_font("Helvetica", style="B", size=11)
    pdf.write(5, "twelve percent")
    pdf.set_font("Helvetica", size=11)
    pdf.write(5, " in the north, see %s for details.")
    pdf.ln(12)
    pdf.cell(0, 5, "1", align="C")
    pdf.add_page(orientation="L")
    pdf.set_font("Helvetica", size=18)
    pdf.cell(0, 10, "Outlook", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", size=11)
    pdf.cell(0, 10, "Next year looks brighter.")
    return bytes(pdf.output())


@pytest.fixture(scope="module")
def source() -> bytes:
    return build_pdf()


def test_units_are_paragraphs_per_page(source):
    units = pdf_format.parse(source).units
    assert [(u.where, u.text) for u in units] == [
        ("page 1 ¶1", "Annual Report"),
        ("page 1 ¶2", LONG),
        ("page 1 ¶3", "Sales grew <s1>twelve percent</s1> in the north, see <s2/> for details."),
        ("page 2 ¶1", "Outlook"),
        ("page 2 ¶2", "Next year looks brighter."),
    ]


def test_render_writes_a_docx_with_a_section_per_page_and_headings(source, marked):
    out = marked(pdf_format.parse(source))
    document = docx.Document(io.BytesIO(out))
    paragraphs = [(p.style.name, p.text) for p in document.paragraphs if p.text]
    assert paragraphs == [
        ("Heading 1", "«Annual Report»"),
        ("Normal", f"«{LONG}»"),
        ("Normal", "«Sales grew »«twelve percent»« in the north, see »%s« for details.»"),
        ("Normal", "1"),
        ("Heading 2", "«Outlook»"),
        ("Normal", "«Next year looks brighter.»"),
    ]
    bold = [run.text for p in document.paragraphs for run in p.runs if run.bold]
    assert bold == ["«twelve percent»"]
    sections = document.sections
    assert len(sections) == 2
    assert sections[0].page_height > sections[0].page_width and sections[1].page_width > sections[1].page_height


def test_identity_translation_gives_back_the_text(source, identity):
    document = docx.Document(io.BytesIO(identity(pdf_format.parse(source))))
    assert [p.text for p in document.paragraphs if p.text] == [
        "Annual Report", LONG, "Sales grew twelve percent in the north, see %s for details.", "1", "Outlook",
        "Next year looks brighter."]


def test_the_output_is_a_docx():
    found = format_for_filename("report.PDF")
    assert found is pdf_format.FORMAT
    assert found.translated_suffix(".pdf") == ".docx"
    assert found.translated_media_type.endswith("wordprocessingml.document")


def test_a_pdf_without_a_text_layer_is_refused():
    pdf = FPDF()
    pdf.add_page()
    pdf.rect(20, 20, 100, 60, style="F")
    with pytest.raises(InvalidDocumentError, match="pdf: the file has no text layer"):
        pdf_format.parse(bytes(pdf.output()))


def test_a_password_protected_pdf_is_refused():
    pdf = FPDF()
    pdf.set_encryption(owner_password="owner", user_password="secret", encryption_method=EncryptionMethod.RC4)
    pdf.add_page()
    pdf.set_font("Helvetica")
    pdf.cell(0, 10, "Secret")
    with pytest.raises(InvalidDocumentError, match="pdf: the file is password-protected"):
        pdf_format.parse(bytes(pdf.output()))


@pytest.mark.parametrize("data", [b"plain text", b"%PDF-1.7\nbroken"])
def test_a_file_that_is_not_a_pdf_is_refused(data):
    with pytest.raises(InvalidDocumentError, match="^pdf: "):
        pdf_format.parse(data)
