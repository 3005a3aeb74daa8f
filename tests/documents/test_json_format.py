"""JSON localisation files: string values are units, keys, order and other values stay."""
from __future__ import annotations

import json

import pytest

from hymt.documents import json_format
from hymt.errors import InvalidDocumentError

SOURCE = {
    "app": {"title": "My Shop", "greeting": "Hello {{name}}, you have {count} new messages"},
    "cart": {
        "items": "{count, plural, =0 {Your cart is empty} one {# item} other {# items}}",
        "checkout": "Proceed to <strong>checkout</strong>",
        "limit": 10,
        "enabled": True,
        "tags": ["Sale", "New arrival", None, 3.5],
    },
    "links": {"help": "https://example.com/help", "code": "SKU-%s"},
    "@title": {"description": "Shown in the browser tab"},
    "empty": "",
}


def build(indent: int | None = 2) -> bytes:
    return (json.dumps(SOURCE, indent=indent, ensure_ascii=False) + "\n").encode()


def test_units_are_string_values_in_order():
    units = json_format.parse(build()).units
    assert [(u.where, u.text) for u in units] == [
        ("app.title", "My Shop"),
        ("app.greeting", "Hello <s1/>, you have <s2/> new messages"),
        ("cart.items", "<s1><s2>Your cart is empty</s2><s3><s4/> item</s3><s5><s6/> items</s5></s1>"),
        ("cart.checkout", "Proceed to <s1>checkout</s1>"),
        ("cart.tags[0]", "Sale"),
        ("cart.tags[1]", "New arrival"),
        ("links.code", "SKU-<s1/>"),
    ]
    assert not any(u.split for u in units)


def test_marked_translation_changes_strings_only(marked):
    out = marked(json_format.parse(build()))
    data = json.loads(out)
    assert list(data) == list(SOURCE) and list(data["cart"]) == list(SOURCE["cart"])
    assert data["app"]["greeting"] == "«Hello »{{name}}«, you have »{count}« new messages»"
    assert data["cart"]["items"] == "{count, plural, =0 {«Your cart is empty»} one {#« item»} other {#« items»}}"
    assert data["cart"]["checkout"] == "«Proceed to »<strong>«checkout»</strong>"
    assert data["cart"]["tags"] == ["«Sale»", "«New arrival»", None, 3.5]
    assert data["cart"]["limit"] == 10 and data["cart"]["enabled"] is True
    assert data["links"]["help"] == "https://example.com/help" and data["@title"] == SOURCE["@title"]
    assert out.endswith(b"}\n") and b'\n  "app": {\n    "title"' in out


@pytest.mark.parametrize("indent", [2, 4, None])
def test_identity_translation_gives_back_the_file(identity, indent):
    source = build(indent)
    assert identity(json_format.parse(source)) == source


@pytest.mark.parametrize("data", [b"{not json", b"", b"\xff\xfe{"])
def test_invalid_json_is_refused(data):
    with pytest.raises(InvalidDocumentError, match="^json: "):
        json_format.parse(data)
