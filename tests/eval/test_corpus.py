"""Corpus: plain-text files, TSV and FLORES directories, and every refusal naming its option."""
from __future__ import annotations

import pytest

from hymt.errors import InvalidInputError
from hymt.eval import Corpus
from hymt.languages import get_language

ZH, EN = get_language("zh"), get_language("en")


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_plain_files_keep_lines_as_they_are(tmp_path):
    src = write(tmp_path / "a.en", "\ufeffOne.\r\nTwo \"quoted\".\n")
    ref = write(tmp_path / "a.zh", "一。\n二。")
    corpus = Corpus.from_files(src, ref, source=EN, target=ZH)
    assert corpus.sources == ("One.", 'Two "quoted".') and corpus.references == ("一。", "二。")
    assert len(corpus) == 2 and corpus.head(1).sources == ("One.",) and corpus.head(1).references == ("一。",)


def test_languages_come_from_flores_file_names(tmp_path):
    src = write(tmp_path / "devtest.eng_Latn", "Hi.\n")
    ref = write(tmp_path / "devtest.zho_Hans", "嗨。\n")
    corpus = Corpus.from_files(src, ref, source=None, target=None)
    assert (corpus.source, corpus.target) == (EN, ZH)
    with pytest.raises(InvalidInputError, match="--to is required") as err:
        Corpus.from_files(write(tmp_path / "x.txt", "Hi.\n"), None, source=None, target=None)
    assert err.value.field == "to"


def test_different_lengths_say_both_counts(tmp_path):
    src = write(tmp_path / "s", "a\nb\nc\n")
    ref = write(tmp_path / "r", "x\ny\n")
    with pytest.raises(InvalidInputError, match=r"--src .* has 3 lines but --ref .* has 2") as err:
        Corpus.from_files(src, ref, source=EN, target=ZH)
    assert err.value.field == "ref"


@pytest.mark.parametrize("text", ["", "\n\n  \n"])
def test_empty_files_are_refused(tmp_path, text):
    empty = write(tmp_path / "empty", text)
    full = write(tmp_path / "full", "a\n")
    with pytest.raises(InvalidInputError, match="--src .* is empty") as err:
        Corpus.from_files(empty, full, source=EN, target=ZH)
    assert err.value.field == "src"
    with pytest.raises(InvalidInputError, match="--ref .* is empty"):
        Corpus.from_files(full, empty, source=EN, target=ZH)


def test_missing_blank_and_binary_sources(tmp_path):
    with pytest.raises(InvalidInputError, match="--src .*: no such file"):
        Corpus.from_files(tmp_path / "nope", None, source=EN, target=ZH)
    with pytest.raises(InvalidInputError, match="source line 2 is blank"):
        Corpus.from_files(write(tmp_path / "s", "a\n \nb\n"), None, source=EN, target=ZH)
    binary = tmp_path / "b"
    binary.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(InvalidInputError, match="--src .* is not UTF-8"):
        Corpus.from_files(binary, None, source=EN, target=ZH)


def test_tsv_first_two_columns_names_and_numbers(tmp_path):
    tsv = write(tmp_path / "d.tsv", "id\ten\tzh\n1\tHi \"you\".\t嗨。\n2\tBye.\t再见。\n")
    by_name = Corpus.from_tsv(tsv, ("en", "zh"), header=False, source=EN, target=ZH)
    assert by_name.sources == ('Hi "you".', "Bye.") and by_name.references == ("嗨。", "再见。")
    by_number = Corpus.from_tsv(tsv, ("2", "3"), header=True, source=EN, target=ZH)
    assert by_number.sources == by_name.sources
    plain = write(tmp_path / "p.tsv", "Hi.\t嗨。\textra\n")
    assert Corpus.from_tsv(plain, None, header=False, source=EN, target=ZH).references == ("嗨。",)


def test_tsv_refusals(tmp_path):
    tsv = write(tmp_path / "d.tsv", "en\tzh\nHi.\t嗨。\nshort\n")
    with pytest.raises(InvalidInputError, match="no column 'de'; its columns: en, zh") as err:
        Corpus.from_tsv(tsv, ("en", "de"), header=False, source=EN, target=ZH)
    assert err.value.field == "columns"
    with pytest.raises(InvalidInputError, match="line 3 has 1 column"):
        Corpus.from_tsv(tsv, ("en", "zh"), header=False, source=EN, target=ZH)
    with pytest.raises(InvalidInputError, match="no data rows"):
        Corpus.from_tsv(write(tmp_path / "h.tsv", "en\tzh\n"), None, header=True, source=EN, target=ZH)


@pytest.mark.parametrize("layout", ["{split}/{code}.{split}", "{split}/{split}.{code}", "{code}.{split}"])
def test_flores_layouts(tmp_path, layout):
    for code, text in (("eng_Latn", "Hi.\n"), ("cmn_Hans", "嗨。\n")):  # FLORES+ spells Mandarin cmn_Hans
        path = tmp_path / layout.format(split="devtest", code=code)
        path.parent.mkdir(parents=True, exist_ok=True)
        write(path, text)
    corpus = Corpus.from_flores(tmp_path, EN, ZH, "devtest")
    assert corpus.sources == ("Hi.",) and corpus.references == ("嗨。",)


def test_flores_missing_language_lists_the_paths_tried(tmp_path):
    write(tmp_path / "eng_Latn.devtest", "Hi.\n")
    with pytest.raises(InvalidInputError, match=r"--to de: no FLORES file .*deu_Latn\.devtest") as err:
        Corpus.from_flores(tmp_path, EN, get_language("de"), "devtest")
    assert err.value.field == "to"
