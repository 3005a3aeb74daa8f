"""DeepL glossaries on a real `hymt serve`, driven with the official `deepl` client: v3
multilingual glossaries end to end, v2 glossaries seen and cleaned up through v3, glossaries
of either kind in translations, and DeepL's errors."""
from __future__ import annotations

import deepl
import httpx
import pytest
from deepl.api_data import MultilingualGlossaryDictionaryEntries as DictionaryEntries

from hymt.server.glossary_store import GLOSSARY_FILE


@pytest.fixture(scope="module")
def deepl_client(hymt_server):
    c = deepl.DeepLClient("any-key", server_url=hymt_server.url)
    yield c
    c.close()


def test_multilingual_glossary_lifecycle(deepl_client):
    created = deepl_client.create_multilingual_glossary("pets", [
        DictionaryEntries("EN", "DE", {"cat": "Katze", "dog": "Hund"}),
        DictionaryEntries("DE", "EN", {"Katze": "cat"}),
    ])
    gid = created.glossary_id
    assert [(d.source_lang, d.target_lang, d.entry_count) for d in created.dictionaries] == [
        ("EN", "DE", 2), ("DE", "EN", 1)]
    assert gid in [g.glossary_id for g in deepl_client.list_multilingual_glossaries()]
    assert deepl_client.get_multilingual_glossary(gid).name == "pets"

    def entries(source: str, target: str) -> dict[str, str]:
        found = deepl_client.get_multilingual_glossary_entries(gid, source, target).dictionaries[0]
        return deepl.convert_tsv_to_dict(found.entries)

    assert entries("EN", "DE") == {"cat": "Katze", "dog": "Hund"}
    assert entries("DE", "EN") == {"Katze": "cat"}

    deepl_client.update_multilingual_glossary_dictionary(gid, DictionaryEntries("EN", "DE", {"cat": "Kater",
                                                                                             "cow": "Kuh"}))
    assert entries("EN", "DE") == {"cat": "Kater", "dog": "Hund", "cow": "Kuh"}
    assert deepl_client.update_multilingual_glossary_name(gid, "animals").name == "animals"
    replaced = deepl_client.replace_multilingual_glossary_dictionary(gid, DictionaryEntries("DE", "EN",
                                                                                            {"Hund": "dog"}))
    assert (replaced.source_lang, replaced.target_lang, replaced.entry_count) == ("DE", "EN", 1)
    assert entries("DE", "EN") == {"Hund": "dog"}
    added = deepl_client.update_multilingual_glossary_dictionary_from_csv(gid, "EN", "FR", "cat,chat\n")
    assert {(d.source_lang, d.target_lang) for d in added.dictionaries} == {("EN", "DE"), ("DE", "EN"), ("EN", "FR")}

    deepl_client.delete_multilingual_glossary_dictionary(gid, source_lang="EN", target_lang="FR")
    assert [(d.source_lang, d.target_lang) for d in deepl_client.get_multilingual_glossary(gid).dictionaries] == [
        ("EN", "DE"), ("DE", "EN")]
    deepl_client.delete_multilingual_glossary(gid)
    with pytest.raises(deepl.GlossaryNotFoundException):
        deepl_client.get_multilingual_glossary(gid)


def test_v2_glossaries_are_listed_and_cleaned_up_through_v3(deepl_client, hymt_server):
    v2 = deepl_client.create_glossary("legacy", source_lang="EN", target_lang="JA", entries={"cat": "猫"})
    assert v2.ready and (v2.source_lang, v2.target_lang, v2.entry_count) == ("EN", "JA", 1)
    assert deepl_client.get_glossary_entries(v2) == {"cat": "猫"}
    listed = {g.glossary_id: g for g in deepl_client.list_multilingual_glossaries()}
    assert [(d.source_lang, d.target_lang) for d in listed[v2.glossary_id].dictionaries] == [("EN", "JA")]
    deepl_client.delete_multilingual_glossary(v2.glossary_id)
    with pytest.raises(deepl.GlossaryNotFoundException):
        deepl_client.get_glossary(v2.glossary_id)
    store_file = hymt_server.log_path.parent / f"cache-{hymt_server.port}" / GLOSSARY_FILE
    assert store_file.is_file()  # beside the translation cache, so it outlives the process


def test_glossaries_of_either_kind_in_translations(deepl_client):
    v2 = deepl_client.create_glossary("v2", source_lang="EN", target_lang="DE", entries={"cat": "Katze"})
    v3 = deepl_client.create_multilingual_glossary("v3", [DictionaryEntries("EN", "DE", {"dog": "Hund"}),
                                                          DictionaryEntries("EN", "FR", {"dog": "chien"})])
    try:
        for options in ({"glossary": v2}, {"glossary": v3}, {"glossary_ids": [v2, v3]}):
            result = deepl_client.translate_text("My cat and my dog.", source_lang="EN", target_lang="DE", **options)
            assert isinstance(result.text, str) and result.detected_source_lang == "EN"
        with pytest.raises(deepl.DeepLException, match="Language pair of the glossary doesn't match"):
            deepl_client.translate_text("My cat.", source_lang="EN", target_lang="FR", glossary=v2.glossary_id)
        with pytest.raises(deepl.DeepLException, match="No dictionary found for language pair en-ja"):
            deepl_client.translate_text("My dog.", source_lang="EN", target_lang="JA", glossary=v3.glossary_id)
    finally:
        deepl_client.delete_glossary(v2)
        deepl_client.delete_multilingual_glossary(v3)


def test_glossary_errors_in_deepls_words(client):
    r = client.post("/v3/glossaries", json={"name": "bad", "dictionaries": [
        {"source_lang": "en", "target_lang": "de", "entries": "cat\tKatze\ncat\tKater", "entries_format": "tsv"}]})
    assert r.status_code == 400
    assert r.json()["message"].startswith("Invalid glossary entries provided: line 2 repeats")
    r = client.post("/v3/glossaries", json={"name": "bad", "dictionaries": [
        {"source_lang": "en", "target_lang": "sv", "entries": "cat\tkatt", "entries_format": "tsv"}]})
    assert r.status_code == 400 and r.json()["message"].startswith("Unsupported glossary source and target language")
    r = client.get("/v3/glossaries/no-such-id/entries", params={"source_lang": "en", "target_lang": "de"})
    assert r.status_code == 404 and "no-such-id" in r.json()["message"]
    r = client.patch("/deepl/v3/glossaries/no-such-id", json={"name": "x"})
    assert r.status_code == 404 and "message" in r.json()


def test_glossary_language_pairs_are_lower_case(client):
    pairs = client.get("/v2/glossary-language-pairs").json()["supported_languages"]
    assert {"source_lang": "en", "target_lang": "de"} in pairs
    assert all(p["source_lang"] == p["source_lang"].lower() for p in pairs)


def test_v3_needs_a_key_like_v2(limits_server):
    r = httpx.get(f"{limits_server.url}/v3/glossaries", timeout=30)
    assert r.status_code == 403 and "message" in r.json()  # DeepL's shape: 403, not 401
    ok = httpx.get(f"{limits_server.url}/v3/glossaries", headers=limits_server.headers, timeout=30)
    assert ok.status_code == 200 and "glossaries" in ok.json()
