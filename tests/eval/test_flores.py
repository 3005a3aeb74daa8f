"""FLORES codes: the table covers every hymt language; command-line languages accept both."""
from __future__ import annotations

from pathlib import Path

import pytest

from hymt.errors import UnknownLanguageError
from hymt.eval.flores import FLORES_CODES, eval_language, flores_language, language_from_filename
from hymt.languages import supported_codes


def test_every_language_has_a_flores_code():
    assert sorted(FLORES_CODES) == sorted(supported_codes())
    assert all(flores_language(names[0]).code == code for code, names in FLORES_CODES.items())


def test_eval_language_takes_codes_names_and_flores_codes():
    assert eval_language("zho_Hant", "--to").code == "zh-Hant"
    assert eval_language("ENG_LATN", "--from").code == "en"
    assert eval_language("German", "--to").code == "de"
    assert eval_language("zh-CN", "--to").code == "zh"


def test_unknown_language_names_the_option_and_lists_codes():
    with pytest.raises(UnknownLanguageError, match=r"--to: unknown language 'swe_Latn'; valid: .*zh, en, fr") as err:
        eval_language("swe_Latn", "--to")
    assert err.value.field == "to"


def test_language_from_filename():
    assert language_from_filename(Path("flores/devtest.yue_Hant")).code == "yue"
    assert language_from_filename(Path("jpn_Jpan.devtest")).code == "ja"
    assert language_from_filename(Path("newstest2014.en")) is None
