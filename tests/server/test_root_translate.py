"""Which protocol root /translate speaks: the body's keys decide (docs/reference/protocols.md §6)."""
from __future__ import annotations

import pytest

from hymt.server.protocols.root_translate import sniff


@pytest.mark.parametrize(("body", "protocol"), [
    ({"q": "hi", "source": "auto", "target": "de"}, "libretranslate"),
    ({"text_list": ["hi"], "target_lang": "de"}, "immersive"),
    ({"text": "hi", "source_lang": "EN", "target_lang": "DE"}, "deeplx"),
    ({"text": ["hi"], "target_lang": "DE"}, "libretranslate"),
    ({}, "libretranslate"),
])
def test_sniff(body, protocol):
    assert sniff(body) == protocol


def test_errors_follow_the_sniffed_protocol(client):
    deeplx = client.post("/translate", json={"text": "hi", "source_lang": "EN", "target_lang": "XX"})
    assert deeplx.status_code == 400 and deeplx.json()["code"] == 400
    libre = client.post("/translate", json={"q": "hi", "source": "en", "target": "xx"})
    assert libre.status_code == 400 and isinstance(libre.json()["error"], str)
    form = client.post("/translate", data={"q": "hi", "source": "en", "target": "de"})
    assert form.status_code == 200 and isinstance(form.json()["translatedText"], str)
