import pytest

from hymt.errors import InvalidInputError, UnknownLanguageError
from hymt.languages import (
    LANGUAGES,
    SCRIPTS,
    UNSPACED_SCRIPTS,
    Language,
    char_script,
    get_language,
    is_chinese,
    script_char_class,
    script_counts,
    supported_codes,
)


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
     ("繁体中文", "zh-Hant"), ("粤语", "yue"), ("  French ", "fr"),
     ("Farsi", "fa"), ("Tagalog", "tl"), ("Simplified Chinese", "zh"), ("简体中文", "zh"), ("簡體中文", "zh"),
     ("繁體中文", "zh-Hant"), ("Chinese (Traditional)", "zh-Hant"), ("chinese (simplified)", "zh"),
     ("中文（繁體）", "zh-Hant"), ("中文(简体)", "zh"), ("Mandarin", "zh"), ("汉语", "zh"), ("廣東話", "yue"),
     ("粵語", "yue"), ("德文", "de"), ("德語", "de"), ("日本語", "ja"), ("한국어", "ko"), ("Deutsch", "de"),
     ("FRANÇAIS", "fr"), ("Bangla", "bn"), ("Uighur", "ug"), ("Myanmar", "my"), ("Cambodian", "km"),
     ("Bahasa Indonesia", "id"), ("Русский", "ru"), ("فارسی", "fa"), ("हिन्दी", "hi")],
)
def test_names_are_accepted(name, code):
    assert get_language(name).code == code


# ISO 639-2/T (terminology) code of each base language, from the ISO 639-2 registry; the
# bibliographic (639-2/B) codes where they differ. zh-Hant and yue have none of their own.
ISO_639_2T = {
    "zh": "zho", "en": "eng", "fr": "fra", "pt": "por", "es": "spa", "ja": "jpn", "tr": "tur", "ru": "rus",
    "ar": "ara", "ko": "kor", "th": "tha", "it": "ita", "de": "deu", "vi": "vie", "ms": "msa", "id": "ind",
    "tl": "tgl", "hi": "hin", "pl": "pol", "cs": "ces", "nl": "nld", "km": "khm", "my": "mya", "fa": "fas",
    "gu": "guj", "ur": "urd", "te": "tel", "mr": "mar", "he": "heb", "bn": "ben", "ta": "tam", "uk": "ukr",
    "bo": "bod", "kk": "kaz", "mn": "mon", "ug": "uig",
}
ISO_639_2B = {"zh": "chi", "fr": "fre", "de": "ger", "ms": "may", "cs": "cze", "nl": "dut", "my": "bur",
              "fa": "per", "bo": "tib"}
# ISO 639-3 individual languages under the macrolanguages above.
ISO_639_3_INDIVIDUAL = {"cmn": "zh", "arb": "ar", "zsm": "ms", "pes": "fa", "khk": "mn", "yue": "yue"}


@pytest.mark.parametrize("code", sorted(ISO_639_2T))
def test_iso_639_2_codes(code):
    assert get_language(ISO_639_2T[code]).code == code
    assert get_language(ISO_639_2T[code].upper()).code == code
    assert ISO_639_2T[code] in get_language(code).iso_codes
    if code in ISO_639_2B:
        assert get_language(ISO_639_2B[code]).code == code
        assert ISO_639_2B[code] in get_language(code).iso_codes


def test_every_language_but_the_chinese_variants_has_an_iso_639_2_code():
    assert set(ISO_639_2T) == set(supported_codes()) - {"zh-Hant", "yue"}


@pytest.mark.parametrize("iso, code", sorted(ISO_639_3_INDIVIDUAL.items()))
def test_iso_639_3_individual_languages(iso, code):
    assert get_language(iso).code == code


def test_iso_639_3_codes_agree_with_lingua():
    """An independent source: lingua's 639-3 code of every language it knows that we support."""
    import lingua

    ours = {lang.code for lang in LANGUAGES}
    checked = 0
    for known in lingua.Language.all():
        two = known.iso_code_639_1.name.lower()
        if two in ours:
            assert get_language(known.iso_code_639_3.name.lower()).code == two, known
            checked += 1
    assert checked >= 30


@pytest.mark.parametrize(
    "value, code",
    [("de-AT", "de"), ("DE_ch", "de"), ("fr-CA", "fr"), ("es-419", "es"), ("zh-Hant-TW", "zh-Hant"),
     ("zh-Hans-CN", "zh"), ("yue-HK", "yue"), ("ar-EG", "ar"), ("pt-BR", "pt"), ("en_US", "en"),
     ("en-Latn-US", "en"), ("sr-Latn-RS", None), ("deu-DE", "de")],
)
def test_region_subtags_are_dropped(value, code):
    if code is None:
        with pytest.raises(UnknownLanguageError):
            get_language(value)
    else:
        assert get_language(value).code == code


@pytest.mark.parametrize(
    "tag, code",
    [("zh-Hant-CN", "zh-Hant"), ("zh-Hans-TW", "zh"), ("zh-Hans-HK", "zh"), ("zh-hk", "zh-Hant"),
     ("zh-MO", "zh-Hant"), ("zh_Hant_HK", "zh-Hant"), ("cmn-Hant-TW", "zh-Hant"), ("cmn-Hans-CN", "zh"),
     ("zho-Hant", "zh-Hant"), ("chi", "zh"), ("zh-cmn-Hant", "zh-Hant"), ("zh-yue", "yue"), ("zh-yue-HK", "yue"),
     ("yue-Hant-HK", "yue"), ("yue-Hans", "yue"), ("zh-SG", "zh"), ("zh-CN", "zh"), ("zh-Latn", "zh")],
)
def test_chinese_script_and_region_subtags(tag, code):
    assert get_language(tag).code == code


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


def test_table_rows_are_validated():
    with pytest.raises(ValueError, match="scripts"):
        Language("xx", "Xish", "某语", scripts=("Klingon",))
    with pytest.raises(ValueError, match="required"):
        Language("", "Xish", "某语")


def test_table_scripts_are_known():
    for lang in LANGUAGES:
        assert lang.scripts and set(lang.scripts) <= SCRIPTS, lang.code


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


@pytest.mark.parametrize("scripts", [UNSPACED_SCRIPTS, {"Latin"}, {"Arabic", "Hebrew"}, SCRIPTS])
def test_script_char_class_matches_char_script(scripts):
    import re

    pattern = re.compile(f"[{script_char_class(scripts)}]")
    points = [*range(0x20, 0x3100), *range(0x3400, 0xA000, 7), *range(0xAC00, 0xFFFF, 5), 0x20000, 0x2FA1F, 0x2FA20]
    for point in points:
        ch = chr(point)
        assert bool(pattern.fullmatch(ch)) == (char_script(ch) in scripts), hex(point)


def test_script_char_class_rejects_unknown_scripts():
    with pytest.raises(ValueError, match="Klingon"):
        script_char_class({"Latin", "Klingon"})
