"""DeepL /v2/translate, languages and usage, driven with the real `deepl` package pointed at
the server (glossaries: test_deepl_glossaries.py)."""
from __future__ import annotations

import deepl
import pytest
from lxml import etree

from hymt.documents.units import DocumentFormat
from hymt.errors import InvalidInputError
from hymt.languages import LANGUAGES
from hymt.server.language_codes import code_for
from hymt.translate.detect import LanguageDetector
from hymt.translate.text_formats import check_text_format, text_format


@pytest.fixture(scope="module", params=["", "/deepl"])
def translator(request, hymt_server):
    t = deepl.Translator("any-key", server_url=hymt_server.url + request.param)
    yield t
    t.close()


def test_translate_one_and_many(translator):
    one = translator.translate_text("Hello, world!", target_lang="DE")
    assert isinstance(one.text, str) and one.detected_source_lang in ("EN", "DE", "IT", "NL", "FR", "ES")
    assert one.billed_characters == len("Hello, world!")
    many = translator.translate_text(["Guten Tag.", "这是一个句子。"], target_lang="EN-US")
    assert len(many) == 2 and many[1].detected_source_lang == "ZH"


def test_regional_and_script_targets(translator):
    for target in ("PT-BR", "ZH-HANT", "ZH-HANS", "EN-GB"):
        result = translator.translate_text("Good evening.", source_lang="EN", target_lang=target)
        assert result.detected_source_lang == "EN"


def test_context_formality_and_tag_handling(translator):
    result = translator.translate_text("<p>Click <b>Save</b>.</p>", source_lang="EN", target_lang="FR",
                                       context="A settings dialog.", tag_handling="html", formality="prefer_more")
    assert result.text.startswith("<p>")


def test_inline_glossary_field(translator):
    result = translator.translate_text("The cat sleeps.", source_lang="EN", target_lang="ZH",
                                       extra_body_parameters={"glossary": {"cat": "猫"}})
    assert isinstance(result.text, str)


def test_v2_glossary_in_a_translation(translator):
    glossary = translator.create_glossary("pets", source_lang="EN", target_lang="DE", entries={"cat": "Katze"})
    assert glossary.ready and glossary.entry_count == 1
    assert glossary.glossary_id in [g.glossary_id for g in translator.list_glossaries()]
    assert translator.get_glossary_entries(glossary) == {"cat": "Katze"}
    result = translator.translate_text("My cat.", source_lang="EN", target_lang="DE", glossary=glossary)
    assert isinstance(result.text, str)
    translator.delete_glossary(glossary)
    with pytest.raises(deepl.GlossaryNotFoundException):
        translator.get_glossary(glossary.glossary_id)


def test_model_type_used_and_billed_characters(translator):
    result = translator.translate_text("Good morning.", source_lang="EN", target_lang="FR",
                                       model_type="prefer_quality_optimized")
    assert result.model_type_used == "quality_optimized" and result.billed_characters == len("Good morning.")
    assert translator.translate_text("Good morning.", source_lang="EN", target_lang="FR").model_type_used is None


@pytest.mark.parametrize(("options", "wording"), [
    ({"target_lang": "XX"}, "Value for 'target_lang' not supported. 'XX'"),
    ({"target_lang": "DE", "source_lang": "QQ"}, "Value for 'source_lang' not supported."),
    ({"target_lang": "DE", "split_sentences": "invalid"}, "Value for 'split_sentences' not supported."),
    ({"target_lang": "DE", "formality": "more"}, "'formality' is not supported for given 'target_lang'."),
    ({"target_lang": "DE", "custom_instructions": ["Be brief."]},
     "Value for 'custom_instructions' not supported. HY-MT1.5-1.8B has no personalization template"),
    ({"target_lang": "DE", "model_type": "fastest"}, "Value for 'model_type' not supported."),
])
def test_bad_values_get_deepls_400_wording(translator, options, wording):
    with pytest.raises(deepl.DeepLException) as info:
        translator.translate_text("Hello", **options)
    assert info.value.http_status_code == 400 and wording in str(info.value)


def test_detected_language_is_what_the_detector_says(translator):
    detector = LanguageDetector()
    for text in ("proton beam", "Guten Morgen, wie geht es dir?"):
        expected = code_for(detector.detect(text).language, "deepl")
        assert translator.translate_text(text, target_lang="JA").detected_source_lang == expected
    assert translator.translate_text("12345", target_lang="JA").detected_source_lang == ""  # nothing to go by


def _rules_format(name: str) -> DocumentFormat | None:
    """The format the text pipeline reads `name` with, when it honours tag rules."""
    try:
        fmt = text_format(check_text_format(name))
    except (InvalidInputError, KeyError):
        return None
    return fmt if fmt.parse_with_rules is not None else None


@pytest.mark.skipif(_rules_format("xml") is None, reason="the text pipeline does not read format 'xml' from "
                    "hymt.documents.registry yet (hymt.translate.text_formats.text_format)")
def test_xml_ignore_tags_keep_their_content(translator):
    text = "<doc><p>Call <raw>do_not_touch(1)</raw> now.</p><p>Second <b>one</b>.</p></doc>"
    result = translator.translate_text(text, source_lang="EN", target_lang="DE", tag_handling="xml",
                                       ignore_tags=["raw"], non_splitting_tags="b", outline_detection=True)
    assert "<raw>do_not_touch(1)</raw>" in result.text
    root = etree.fromstring(result.text.encode())
    assert root.tag == "doc" and [p.tag for p in root] == ["p", "p"]


@pytest.mark.skipif(_rules_format("html") is None, reason="the registered html text format does not honour "
                    "TagRules (ignore_tags, translate=\"no\") yet")
def test_html_ignore_tags_and_translate_no(translator):
    text = '<p>Run <code>make all</code> and <span translate="no">ACME Widget</span> today.</p>'
    result = translator.translate_text(text, source_lang="EN", target_lang="DE", tag_handling="html",
                                       ignore_tags="code")
    assert "<code>make all</code>" in result.text and '<span translate="no">ACME Widget</span>' in result.text


def test_languages_and_usage(translator):
    sources = translator.get_source_languages()
    targets = translator.get_target_languages()
    assert len(sources) == len(LANGUAGES)
    codes = {lang.code for lang in targets}
    assert {"EN-US", "EN-GB", "PT-BR", "PT-PT", "ZH-HANT", "DE"} <= codes
    assert not any(lang.supports_formality for lang in targets)  # HY-MT1.5 has no style template
    usage = translator.get_usage()
    assert usage.character.valid and usage.character.count > 0 and not usage.any_limit_reached


def test_errors_use_message_shape(client):
    r = client.post("/v2/translate", json={"text": ["x"] * 51, "target_lang": "DE"})
    assert r.status_code == 413 and "50" in r.json()["message"]
    r = client.post("/v2/translate", json={"text": ["x"], "target_lang": "DE", "glossary_id": "nope",
                                           "source_lang": "EN"})
    assert r.status_code == 404 and "nope" in r.json()["message"]
    r = client.post("/v2/translate", json={"text": ["x"], "target_lang": "DE", "tag_handling": "markdown"})
    assert r.status_code == 400 and r.json()["message"].startswith("Value for 'tag_handling' not supported.")
    for body, message in (
        ({"text": ["x"]}, "Parameter 'target_lang' not specified."),
        ({"target_lang": "DE"}, "Parameter 'text' not specified."),
        ({"text": ["x"], "target_lang": "DE", "source_lang": "EN", "glossary_ids": ["a"] * 6},
         "Value for 'glossary_ids' not supported."),
        ({"text": ["x"], "target_lang": "DE", "source_lang": "EN", "glossary_id": "a", "glossary_ids": ["b"]},
         "Parameters 'glossary_id' and 'glossary_ids' cannot be used together."),
        ({"text": ["x"], "target_lang": "DE", "glossary_id": "a"},
         "Use of a glossary requires the source_lang parameter to be specified"),
        ({"text": ["x"], "target_lang": "DE", "translation_memory_id": "tm"},
         "Value for 'translation_memory_id' not supported."),
    ):
        r = client.post("/v2/translate", json=body)
        assert r.status_code == 400 and r.json()["message"].startswith(message), (body, r.text)


def test_form_encoded_body_with_repeated_text(client):
    r = client.post("/v2/translate", data={"text": ["One.", "Two."], "target_lang": "JA"},
                    headers={"Authorization": "DeepL-Auth-Key whatever"})
    assert r.status_code == 200, r.text
    assert len(r.json()["translations"]) == 2


def test_php_style_text_brackets_give_a_list_even_for_one_text(client):
    for texts in (["One."], ["One.", "Two."]):
        r = client.post("/v2/translate", data={"text[]": texts, "target_lang": "JA"},
                        headers={"Authorization": "DeepL-Auth-Key whatever"})
        assert r.status_code == 200, r.text
        assert len(r.json()["translations"]) == len(texts)
