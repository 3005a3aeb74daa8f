"""YAML localisation files: string values are units; comments, order, quoting, block styles
and aliases survive the round trip."""
from __future__ import annotations

import io

import pytest
from ruamel.yaml import YAML

from hymt.documents import yaml_format
from hymt.errors import InvalidDocumentError

SOURCE = b"""# Storefront strings
en:
  title: "My Shop"   # shown in the header
  greeting: 'Hello %{name}!'
  farewell: &bye See you soon
  footer_bye: *bye
  items:
    - Apples
    - Pears
  help: |
    Call us any time.
    We answer within a day.
  limit: 10
  enabled: true
  version: "1.2"
"""


def _load(data: bytes):
    return YAML(typ="rt").load(io.BytesIO(data))


def test_units_are_string_values_and_an_alias_is_one_unit():
    units = yaml_format.parse(SOURCE).units
    assert [(u.where, u.text) for u in units] == [
        ("en.title", "My Shop"),
        ("en.greeting", "Hello <s1/>!"),
        ("en.farewell", "See you soon"),
        ("en.items[0]", "Apples"),
        ("en.items[1]", "Pears"),
        ("en.help", "Call us any time.\nWe answer within a day."),
    ]


def test_marked_translation_keeps_comments_quotes_and_aliases(marked):
    out = marked(yaml_format.parse(SOURCE))
    text = out.decode()
    assert text.startswith("# Storefront strings\nen:\n")
    assert 'title: "«My Shop»" # shown in the header' in text
    assert "greeting: '«Hello »%{name}«!»'" in text
    assert "farewell: &bye «See you soon»" in text and "footer_bye: *bye" in text
    assert "help: |\n    «Call us any time.\n    We answer within a day.»\n" in text
    data = _load(out)["en"]
    assert data["items"] == ["«Apples»", "«Pears»"]
    assert data["limit"] == 10 and data["enabled"] is True and data["version"] == "1.2"


def test_identity_translation_gives_back_the_file(identity):
    assert identity(yaml_format.parse(SOURCE)) == SOURCE


def test_several_documents_stay_several(marked):
    source = b"---\ntitle: First page\n---\ntitle: Second page\n"
    out = marked(yaml_format.parse(source))
    assert [d["title"] for d in YAML(typ="rt").load_all(out.decode())] == ["«First page»", "«Second page»"]


def test_a_file_of_aliases_is_walked_once_per_container():
    bomb = "a: &a [x, y, z]\n" + "".join(
        f"{chr(98 + n)}: &{chr(98 + n)} [" + ", ".join([f"*{chr(97 + n)}"] * 9) + "]\n" for n in range(8))
    assert [u.text for u in yaml_format.parse(bomb.encode()).units] == ["x", "y", "z"]


@pytest.mark.parametrize("data", [b"a: [unclosed", b"key: value\n  bad indent: x\n", b"\xff\xfe"])
def test_invalid_yaml_is_refused(data):
    with pytest.raises(InvalidDocumentError, match="^yaml: "):
        yaml_format.parse(data)
