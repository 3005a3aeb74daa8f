"""Translator.translate_file: a file in, the same kind of file out; recorded answers reused."""
from __future__ import annotations

import io
import re

import pytest

from hymt.errors import InvalidDocumentError
from hymt.translate.output_log import MemoryOutputLog


def model_like(user_turn, params):
    """Upper-cases the source as a model answering the prompt would: the formatted template's
    answer comes wrapped in <target>, its tags kept."""
    body = user_turn.split("\n\n", 1)[1]
    source = re.search(r"<source>(.*)</source>", body, re.S)
    text = source.group(1) if source else body
    upper = re.sub(r"(<[^>]*>)|([^<]+)", lambda m: m.group(1) or m.group(2).upper(), text)
    return f"<target>{upper}</target>" if source else upper


def docx_bytes(paragraphs):
    import docx

    document = docx.Document()
    for runs in paragraphs:
        paragraph = document.add_paragraph()
        for text, bold in runs:
            paragraph.add_run(text).bold = bold
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def docx_paragraphs(data):
    import docx

    return [[(r.text, bool(r.bold)) for r in p.runs] for p in docx.Document(io.BytesIO(data)).paragraphs]


def test_a_docx_comes_back_translated_with_its_formatting(make_translator):
    translator, engine = make_translator(answer=model_like)
    data = docx_bytes([[("Please ", False), ("do not", True), (" reply.", False)], [("Thank you.", False)]])
    result = translator.translate_file(data, to="de", source="en", filename="letter.docx")
    assert result.filename == "letter.de.docx" and result.format == "docx"
    assert docx_paragraphs(result.data) == [[("PLEASE ", False), ("DO NOT", True), (" REPLY.", False)],
                                            [("THANK YOU.", False)]]
    assert result.translated_segments == 2
    assert any("<s1>do not</s1>" in user for user, _ in engine.prompts)  # one sentence, tags inside


def test_recorded_answers_are_reused(make_translator):
    translator, engine = make_translator(answer=model_like)
    log = MemoryOutputLog()
    first = docx_bytes([[("One is here.", False)], [("Two is here.", False)]])
    translator.translate_file(first, to="de", source="en", format="docx", log=log, retry=False)
    assert len(engine.prompts) == 2 and len(log.outputs) == 2
    longer = docx_bytes([[("One is here.", False)], [("Two is here.", False)], [("Three is new.", False)]])
    result = translator.translate_file(longer, to="de", source="en", format="docx", log=log, retry=False)
    assert len(engine.prompts) == 3  # only the new paragraph reached the engine
    assert [p[0][0] for p in docx_paragraphs(result.data)] == ["ONE IS HERE.", "TWO IS HERE.", "THREE IS NEW."]


def test_bad_files_are_clear_errors(make_translator):
    translator, _ = make_translator()
    with pytest.raises(InvalidDocumentError) as err:
        translator.translate_file(b"not a zip", to="de", filename="x.docx")
    assert "docx" in str(err.value).lower()
    with pytest.raises(InvalidDocumentError) as err:
        translator.translate_file(b"data", to="de", filename="../../etc/passwd.exe")
    assert "supported" in str(err.value)
