"""DeepL's document API (/v2/document), driven with the real `deepl` package against the session
`hymt serve` process (tests/server/conftest.py): upload, status polling, download, the document
deleted once downloaded, and DeepL's error shapes."""
from __future__ import annotations

import deepl
import pytest
from documents_support import docx_bytes, docx_paragraphs

PARAGRAPHS = ["The meeting starts at nine.", "Please bring the report."]


@pytest.fixture(scope="module")
def translator(hymt_server):
    t = deepl.Translator("any-key", server_url=hymt_server.url)
    yield t
    t.close()


def test_translate_document_from_a_file_object(translator, tmp_path):
    source = tmp_path / "agenda.docx"
    source.write_bytes(docx_bytes(PARAGRAPHS))
    target = tmp_path / "agenda.de.docx"
    with source.open("rb") as given, target.open("wb") as out:
        status = translator.translate_document(given, out, source_lang="EN", target_lang="DE")
    assert status.done and status.ok and status.status.value == "done"
    assert status.billed_characters == sum(len(p) for p in PARAGRAPHS)
    translated = docx_paragraphs(target.read_bytes())
    assert len(translated) == len(PARAGRAPHS) and all(translated)


def test_translate_document_from_filepath_pdf_into_docx(translator, tmp_path):
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    pdf.multi_cell(0, 6, "Quarterly results are in. Sales grew in every region.")
    source, target = tmp_path / "report.pdf", tmp_path / "report.docx"
    source.write_bytes(bytes(pdf.output()))
    status = translator.translate_document_from_filepath(source, target, target_lang="EN-GB")
    assert status.done
    assert len(docx_paragraphs(target.read_bytes())) >= 1


def test_a_downloaded_document_is_gone_and_errors_are_deepls(translator, tmp_path):
    handle = translator.translate_document_upload(docx_bytes(["One more page."]), target_lang="FR",
                                                  filename="page.docx")
    assert len(handle.document_id) == 32 and len(handle.document_key) == 64
    status = translator.translate_document_wait_until_done(handle)
    assert status.done
    translator.translate_document_download(handle, (tmp_path / "page.fr.docx").open("wb"))
    with pytest.raises(deepl.DeepLException, match="Not found, message: Document not found"):
        translator.translate_document_get_status(handle)

    with pytest.raises(deepl.DeepLException, match="Bad request, message: unsupported file type 'x.exe'; supported"):
        translator.translate_document_upload(b"MZ", target_lang="DE", filename="x.exe")
    with pytest.raises(deepl.DeepLException, match="Bad request, message: docx: "):
        translator.translate_document_upload(b"not a zip", target_lang="DE", filename="x.docx")
    with pytest.raises(deepl.DeepLException, match="Bad request, message: .*output_format.*valid: docx"):
        translator.translate_document_upload(docx_bytes(["Hi."]), target_lang="DE", filename="a.docx",
                                             output_format="pdf")
    wrong_key = deepl.DocumentHandle(handle.document_id, "0" * 64)
    with pytest.raises(deepl.DeepLException, match="Not found"):
        translator.translate_document_get_status(wrong_key)
