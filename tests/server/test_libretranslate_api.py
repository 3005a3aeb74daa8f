"""LibreTranslate routes, driven with the real `libretranslatepy` client and raw requests."""
from __future__ import annotations

import urllib.error

import pytest
from libretranslatepy import LibreTranslateAPI

from hymt.languages import LANGUAGES


@pytest.fixture(scope="module", params=["", "/libretranslate"])
def lt(request, hymt_server):
    return LibreTranslateAPI(hymt_server.url + request.param)


def test_client_translate(lt):
    out = lt.translate("Hello, how are you?", "en", "de")
    assert isinstance(out, str)


def test_client_detect_and_languages(lt):
    detected = lt.detect("Das ist ein ganz normaler deutscher Satz.")
    assert detected[0]["language"] == "de" and 0 < detected[0]["confidence"] <= 100
    languages = lt.languages()
    codes = [lang["code"] for lang in languages]
    assert len(codes) == len(LANGUAGES) and "zh-Hans" in codes and "zh-Hant" in codes
    assert "en" in languages[codes.index("zh-Hans")]["targets"]


def test_client_error_is_an_http_error(lt):
    with pytest.raises(urllib.error.HTTPError) as info:
        lt.translate("Hello", "en", "sv")
    assert info.value.code == 400


def test_list_input_with_auto_detects_each_item(client):
    r = client.post("/translate", json={"q": ["Guten Morgen, wie geht es dir?", "这是中文句子。"],
                                        "source": "auto", "target": "en"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert isinstance(body["translatedText"], list) and len(body["translatedText"]) == 2
    assert [d["language"] for d in body["detectedLanguage"]] == ["de", "zh-Hans"]
    assert all(0 < d["confidence"] <= 100 for d in body["detectedLanguage"])
    assert "alternatives" not in body


def test_given_source_has_no_detected_language(client):
    body = client.post("/translate", json={"q": "Hello", "source": "en", "target": "zt"}).json()
    assert isinstance(body["translatedText"], str) and "detectedLanguage" not in body


def test_alternatives_are_sampled_translations(client):
    body = client.post("/translate", json={"q": "A short sentence.", "source": "en", "target": "fr",
                                           "alternatives": 2}).json()
    alternatives = body["alternatives"]
    assert isinstance(alternatives, list) and len(alternatives) <= 2
    assert body["translatedText"] not in alternatives
    batch = client.post("/translate", json={"q": ["One.", "Two."], "source": "en", "target": "fr",
                                            "alternatives": 1}).json()
    assert len(batch["alternatives"]) == 2 and all(isinstance(a, list) for a in batch["alternatives"])


def test_html_format_keeps_tags(client):
    body = client.post("/translate", json={"q": "<b>Bold</b> text", "source": "en", "target": "de",
                                           "format": "html"}).json()
    assert body["translatedText"].startswith("<b>")


@pytest.mark.parametrize(("payload", "word"), [
    ({"source": "en", "target": "de"}, "q"),
    ({"q": "Hi", "source": "en"}, "target"),
    ({"q": "Hi", "source": "xx", "target": "de"}, "source"),
    ({"q": "Hi", "source": "en", "target": "de", "format": "pdf"}, "format"),
    ({"q": "Hi", "source": "en", "target": "de", "alternatives": 9}, "alternatives"),
    ({"q": "x" * 20001, "source": "en", "target": "de"}, "20000"),
])
def test_errors_are_400_with_error_string(client, payload, word):
    r = client.post("/libretranslate/translate", json=payload)
    assert r.status_code == 400
    assert isinstance(r.json()["error"], str) and word in r.json()["error"]


def test_nothing_translatable_is_echoed_as_en(client):
    body = client.post("/translate", json={"q": ["  ", "Hallo Welt, wie geht es?"], "source": "auto",
                                           "target": "fr"}).json()
    assert body["translatedText"][0] == "  "
    assert body["detectedLanguage"][0] == {"language": "en", "confidence": 0}
