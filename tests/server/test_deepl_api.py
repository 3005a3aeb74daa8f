"""DeepL v2 subset, driven with the real `deepl` package pointed at the server."""
from __future__ import annotations

import deepl
import pytest

from hymt.languages import LANGUAGES


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


def test_glossaries_in_memory(translator):
    glossary = translator.create_glossary("pets", source_lang="EN", target_lang="DE", entries={"cat": "Katze"})
    assert glossary.ready and glossary.entry_count == 1
    assert glossary.glossary_id in [g.glossary_id for g in translator.list_glossaries()]
    assert translator.get_glossary_entries(glossary) == {"cat": "Katze"}
    result = translator.translate_text("My cat.", source_lang="EN", target_lang="DE", glossary=glossary)
    assert isinstance(result.text, str)
    translator.delete_glossary(glossary)
    with pytest.raises(deepl.GlossaryNotFoundException):
        translator.get_glossary(glossary.glossary_id)


def test_languages_and_usage(translator):
    sources = translator.get_source_languages()
    targets = translator.get_target_languages()
    assert len(sources) == len(LANGUAGES)
    codes = {lang.code for lang in targets}
    assert {"EN-US", "EN-GB", "PT-BR", "PT-PT", "ZH-HANT", "DE"} <= codes
    usage = translator.get_usage()
    assert usage.character.valid and usage.character.count > 0 and not usage.any_limit_reached


def test_errors_use_message_shape(client, translator):
    with pytest.raises(deepl.DeepLException) as info:
        translator.translate_text("Hello", target_lang="SV")
    assert info.value.http_status_code == 400 and "SV" in str(info.value)
    r = client.post("/v2/translate", json={"text": ["x"] * 51, "target_lang": "DE"})
    assert r.status_code == 413 and "50" in r.json()["message"]
    r = client.post("/v2/translate", json={"text": ["x"], "target_lang": "DE", "glossary_id": "nope",
                                           "source_lang": "EN"})
    assert r.status_code == 404 and "nope" in r.json()["message"]
    r = client.post("/v2/translate", json={"text": ["x"], "target_lang": "DE", "tag_handling": "markdown"})
    assert r.status_code == 400 and "tag_handling" in r.json()["message"]


def test_form_encoded_body_with_repeated_text(client):
    r = client.post("/v2/translate", data={"text": ["One.", "Two."], "target_lang": "JA"},
                    headers={"Authorization": "DeepL-Auth-Key whatever"})
    assert r.status_code == 200, r.text
    assert len(r.json()["translations"]) == 2
