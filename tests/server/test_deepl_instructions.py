"""DeepL's formality, style_id, custom_instructions, context and glossaries on each family's
templates: the mapping itself, and the prompts that reach the model (an in-process app over a
scripted engine that records them)."""
from __future__ import annotations

import time

import pytest
from fastapi.testclient import TestClient

from hymt.families import get_family
from hymt.server.app import create_app
from hymt.server.errors import ApiError
from hymt.server.glossary_store import GlossarySettings
from hymt.server.protocols.deepl_instructions import StyleOptions, style_options
from hymt.server.protocols.deepl_request import read_translate
from hymt.server.settings import ServerSettings
from hymt.testing import ScriptedEngine, source_of, write_tiny_checkpoint

MT2 = get_family("Hy-MT2-1.8B")
MT15 = get_family("HY-MT1.5-1.8B")
HUNYUAN = get_family("Hunyuan-MT-7B")
PETS = (("cat", "Katze"), ("dog", "Hund"), ("cow", "Kuh"))


def request(**fields: object):
    return read_translate({"text": ["My cat and my dog.", "Hello"], "target_lang": "DE", **fields})


def test_custom_instructions_become_personalization_lines_with_style_formality_and_terms():
    options = style_options(MT2, request(custom_instructions=["Keep it short."], style_id="playful",
                                         formality="prefer_less", context="A pet shop."), PETS)
    assert options == StyleOptions(template="personalization", preferences=(
        "Keep it short.", "Write in this style: playful.", "Use informal language.",
        'Translate "cat" as "Katze".', 'Translate "dog" as "Hund".'))


def test_style_id_and_formality_on_the_style_template():
    assert style_options(MT2, request(style_id="legal prose", formality="more"), ()).style == "legal prose, formal"
    assert style_options(MT2, request(formality="less"), ()) == StyleOptions(style="informal")


@pytest.mark.parametrize(("fields", "start"), [
    ({"custom_instructions": ["Be brief."]}, "Value for 'custom_instructions' not supported. HY-MT1.5-1.8B has no "
                                             "personalization template"),
    ({"style_id": "playful"}, "Value for 'style_id' not supported. HY-MT1.5-1.8B has no style template"),
    ({"formality": "more"}, "'formality' is not supported for given 'target_lang'. HY-MT1.5-1.8B"),
])
def test_families_without_the_template_get_deepls_400(fields, start):
    with pytest.raises(ApiError) as info:
        style_options(MT15, request(**fields), ())
    assert info.value.status == 400 and info.value.message.startswith(start)


def test_prefer_formality_and_context_fall_back_where_there_is_no_template():
    assert style_options(MT15, request(formality="prefer_more", context="A shop."), ()) == StyleOptions(
        context="A shop.")
    assert style_options(HUNYUAN, request(context="A shop."), ()) == StyleOptions()


def test_a_style_rule_id_is_refused_plainly():
    with pytest.raises(ApiError, match="hymt keeps no style rule lists"):
        request(style_id="7ff9bfd6-cd85-4190-8503-d6215a321519")


# -- the prompts that reach the model ---------------------------------------------------------
@pytest.fixture(scope="module")
def mt2_app(tmp_path_factory):
    """(TestClient, engine): an app serving a tiny Hy-MT2 whose engine answers the source."""
    from hymt.checkpoint import load_checkpoint
    from hymt.translate import Translator

    root = tmp_path_factory.mktemp("deepl-mt2")
    model_dir = write_tiny_checkpoint(root / "Hy-MT2-1.8B", "Hy-MT2-1.8B")
    engine = ScriptedEngine(load_checkpoint(model_dir), lambda user, params: source_of(user))
    settings = ServerSettings(model=str(model_dir), cache=False,
                              glossaries=GlossarySettings(root / "glossaries.sqlite3"))
    app = create_app(settings, translator_factory=lambda s: Translator(str(model_dir), engine=engine, cache=False))
    with TestClient(app) as client:
        deadline = time.monotonic() + 60
        while client.get("/ready").status_code != 200 and time.monotonic() < deadline:
            time.sleep(0.05)
        yield client, engine


def test_glossaries_of_either_kind_reach_the_terminology_prompt(mt2_app):
    client, engine = mt2_app
    v2 = client.post("/v2/glossaries", json={"name": "v2", "source_lang": "en", "target_lang": "de",
                                             "entries": "cat\tKatze", "entries_format": "tsv"}).json()
    v3 = client.post("/v3/glossaries", json={"name": "v3", "dictionaries": [
        {"source_lang": "EN", "target_lang": "DE", "entries": "cat,Kater\ndog,Hund", "entries_format": "csv"}]}).json()
    r = client.post("/v2/translate", json={"text": ["My cat and my dog."], "source_lang": "EN", "target_lang": "DE",
                                          "glossary_ids": [v2["glossary_id"], v3["glossary_id"]]})
    assert r.status_code == 200, r.text
    prompt = engine.prompts[-1][0]
    assert "cat translates to Katze" in prompt and "dog translates to Hund" in prompt and "Kater" not in prompt
    r = client.post("/v2/translate", data={"text": "My dog.", "source_lang": "EN", "target_lang": "FR",
                                          "glossary_id": v3["glossary_id"]})
    assert r.status_code == 400
    assert r.json()["message"].startswith("Language pair of the glossary doesn't match the language pair of the "
                                          "request: glossary")


def test_instructions_and_style_reach_the_hy_mt2_templates(mt2_app):
    client, engine = mt2_app
    r = client.post("/v2/translate", json={"text": ["Hello there."], "source_lang": "EN", "target_lang": "DE",
                                          "custom_instructions": ["Use a friendly tone."]})
    assert r.status_code == 200, r.text
    assert "1. Use a friendly tone.\n2. Translate the [Source Text] into German." in engine.prompts[-1][0]
    client.post("/v2/translate", json={"text": ["Good evening."], "source_lang": "EN", "target_lang": "FR",
                                       "style_id": "legal prose", "formality": "more"})
    assert "strictly conform to [legal prose, formal]" in engine.prompts[-1][0]
    targets = client.get("/v2/languages", params={"type": "target"}).json()
    assert all(row["supports_formality"] for row in targets)
