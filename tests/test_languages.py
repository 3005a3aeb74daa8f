import pytest

from hymt.errors import InvalidInputError, UnknownLanguageError
from hymt.languages import LANGUAGES, char_script, get_language, is_chinese, script_counts, supported_codes


def test_table_is_the_38_official_languages_in_order():
    codes = supported_codes()
    assert len(codes) == 38
    assert codes[:5] == ("zh", "en", "fr", "pt", "es")
    assert codes[18] == "zh-Hant"
    assert codes[-5:] == ("bo", "kk", "mn", "ug", "yue")
    assert len(set(codes)) == 38


@pytest.mark.parametrize(
    "code, english, chinese",
    [("de", "German", "德语"), ("zh-Hant", "Traditional Chinese", "繁体中文"), ("tl", "Filipino", "菲律宾语"),
     ("my", "Burmese", "缅甸语"), ("yue", "Cantonese", "粤语"), ("id", "Indonesian", "印尼语")],
)
def test_names(code, english, chinese):
    lang = get_language(code)
    assert (lang.code, lang.english_name, lang.chinese_name) == (code, english, chinese)


@pytest.mark.parametrize(
    "alias, code",
    [
        ("zh-CN", "zh"), ("zh-Hans", "zh"), ("zh-SG", "zh"), ("cn", "zh"), ("ZH", "zh"), ("ZH-HANS", "zh"),
        ("zh-TW", "zh-Hant"), ("zh-HK", "zh-Hant"), ("zh-MO", "zh-Hant"), ("zh-Hant", "zh-Hant"),
        ("zt", "zh-Hant"), ("ZH-HANT", "zh-Hant"), ("zh_HANT", "zh-Hant"), ("zh-TR", "zh-Hant"),
        ("zh_tw", "zh-Hant"), ("yue", "yue"), ("zh-yue", "yue"), ("pt-BR", "pt"), ("PT-PT", "pt"),
        ("pb", "pt"), ("en-US", "en"), ("EN-GB", "en"), ("fil", "tl"), ("iw", "he"), ("in", "id"),
        ("mn-Cyrl", "mn"),
    ],
)
def test_aliases(alias, code):
    assert get_language(alias).code == code


@pytest.mark.parametrize(
    "name, code",
    [("German", "de"), ("german", "de"), ("德语", "de"), ("Traditional Chinese", "zh-Hant"),
     ("繁体中文", "zh-Hant"), ("粤语", "yue"), ("  French ", "fr")],
)
def test_names_are_accepted(name, code):
    assert get_language(name).code == code


@pytest.mark.parametrize(
    "value, code",
    [("de-AT", "de"), ("DE_ch", "de"), ("fr-CA", "fr"), ("es-419", "es"), ("zh-Hant-TW", "zh-Hant"),
     ("zh-Hans-CN", "zh"), ("yue-HK", "yue"), ("ar-EG", "ar")],
)
def test_region_subtags_are_dropped(value, code):
    assert get_language(value).code == code


@pytest.mark.parametrize("value", ["sv", "no", "da", "sv-SE", "nb-NO", "fi", "Swedish", "auto", "", "  ", "xx-de"])
def test_unsupported_languages_raise_listing_codes(value):
    with pytest.raises(UnknownLanguageError) as info:
        get_language(value, field="target")
    assert info.value.field == "target"
    message = str(info.value)
    assert "target" in message and "zh-Hant" in message and "yue" in message
    assert isinstance(info.value, InvalidInputError) and isinstance(info.value, ValueError)


def test_non_string_raises_with_default_field():
    with pytest.raises(UnknownLanguageError) as info:
        get_language(None)  # type: ignore[arg-type]
    assert info.value.field == "language"


def test_language_instance_passes_through():
    de = get_language("de")
    assert get_language(de) is de


def test_is_chinese():
    assert [c for c in supported_codes() if is_chinese(c)] == ["zh", "zh-Hant", "yue"]
    assert is_chinese("zh-TW") and is_chinese(get_language("Cantonese"))
    assert not is_chinese("ja")


def test_scripts():
    by_code = {lang.code: lang for lang in LANGUAGES}
    assert by_code["ja"].scripts == ("Hiragana", "Katakana", "Han")
    assert by_code["zh-Hant"].scripts == ("Han",)
    assert "Arabic" in by_code["ug"].scripts and "Arabic" in by_code["fa"].scripts
    assert by_code["mr"].scripts == by_code["hi"].scripts == ("Devanagari",)
    assert "Cyrillic" in by_code["mn"].scripts and by_code["uk"].scripts == ("Cyrillic",)
    assert by_code["de"].scripts == ("Latin",) and by_code["vi"].scripts == ("Latin",)


@pytest.mark.parametrize(
    "text, script",
    [("a", "Latin"), ("é", "Latin"), ("ж", "Cyrillic"), ("中", "Han"), ("あ", "Hiragana"), ("カ", "Katakana"),
     ("한", "Hangul"), ("ก", "Thai"), ("ក", "Khmer"), ("မ", "Myanmar"), ("ལ", "Tibetan"), ("ع", "Arabic"),
     ("ש", "Hebrew"), ("क", "Devanagari"), ("ব", "Bengali"), ("ગ", "Gujarati"), ("త", "Telugu"),
     ("த", "Tamil"), ("ᠮ", "Mongolian"), ("1", None), ("，", None),
     # block edges, and the gaps just past them
     ("\u0041", "Latin"), ("\u005a", "Latin"), ("\u005b", None), ("\u9fff", "Han"), ("\ua000", None),
     ("\U0002fa1f", "Han"), ("\U0002fa20", None), ("\u0000", None)],
)
def test_char_script(text, script):
    assert char_script(text) == script


def test_script_counts_agree_with_char_script_on_any_text():
    import random
    from collections import Counter

    rng = random.Random(7)
    texts = ["", "Hello, 世界! こんにちは 123", "broken \ud800 surrogate"]
    texts += ["".join(chr(rng.choice((rng.randint(0, 0x2FFFF), rng.randint(0x4E00, 0x9FFF), rng.randint(0, 0x600))))
                      for _ in range(rng.randint(1, 60))).replace("\ud800", "") for _ in range(200)]
    for text in texts:
        assert script_counts(text) == Counter(s for s in map(char_script, text) if s is not None), text


def test_every_language_script_is_classifiable():
    known = {char_script(chr(cp)) for cp in range(0x20, 0xFFFF)}
    for lang in LANGUAGES:
        assert set(lang.scripts) <= known, lang.code
