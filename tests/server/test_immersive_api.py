"""Immersive Translate's custom API (/imme, root /translate with text_list), with ?token=."""
from __future__ import annotations


def test_imme_keeps_order_and_count(client):
    texts = ["Good morning.", "Bonjour à tous, comment allez-vous aujourd'hui ?", "这是第三段。"]
    r = client.post("/imme", json={"source_lang": "auto", "target_lang": "zh-CN", "text_list": texts})
    assert r.status_code == 200, r.text
    translations = r.json()["translations"]
    assert len(translations) == 3 and all(isinstance(t["text"], str) for t in translations)
    assert [t["detected_source_lang"] for t in translations][1:] == ["fr", "zh-CN"]


def test_root_translate_sniffs_text_list(client):
    r = client.post("/translate", json={"source_lang": "en", "target_lang": "fil", "text_list": ["Hi", "Bye"]})
    assert r.status_code == 200
    assert [t["detected_source_lang"] for t in r.json()["translations"]] == ["en", "en"]


def test_over_max_batch_is_413(client):
    r = client.post("/imme", json={"source_lang": "auto", "target_lang": "de", "text_list": ["x"] * 129})
    assert r.status_code == 413 and "128" in r.json()["error"]


def test_bad_target_is_400(client):
    r = client.post("/imme", json={"source_lang": "auto", "target_lang": "xx", "text_list": ["x"]})
    assert r.status_code == 400 and "target_lang" in r.json()["error"]


def test_blank_items_come_back_unchanged(client):
    r = client.post("/imme", json={"source_lang": "en", "target_lang": "de", "text_list": ["Hello", "", "  "]})
    assert r.status_code == 200, r.text
    assert [t["text"] for t in r.json()["translations"]][1:] == ["", "  "]
