"""/v2/translate's fields as DeepL clients send them: JSON arrays or comma-separated form text
for tag lists, 0/1/true/false flags, case, and what is refused."""
from __future__ import annotations

import pytest

from hymt.documents.units import TagRules
from hymt.server.errors import ApiError
from hymt.server.protocols.deepl_request import read_translate


def read(**fields: object):
    return read_translate({"text": "Hi", "target_lang": "de", **fields})


def test_tag_lists_from_arrays_comma_text_and_repeated_form_fields():
    xml = read(tag_handling="XML", ignore_tags=["raw,Code", " x "], splitting_tags="br,hr",
               non_splitting_tags=["b"], outline_detection="0")
    assert xml.tag_handling == "xml"
    assert xml.tag_rules == TagRules(ignore=frozenset({"raw", "Code", "x"}), splitting=frozenset({"br", "hr"}),
                                     non_splitting=frozenset({"b"}), outline_detection=False)
    html = read(tag_handling="html", ignore_tags="CODE,Pre", outline_detection=True)
    assert html.tag_rules.ignore == frozenset({"code", "pre"}) and html.tag_rules.outline_detection


def test_codes_texts_and_defaults():
    request = read_translate({"text": ["One", "Two"], "target_lang": "zh-hant", "source_lang": "auto",
                              "split_sentences": 0, "preserve_formatting": "1", "show_billed_characters": True})
    assert request.texts == ("One", "Two") and request.target.code == "zh-Hant" and request.target_code == "ZH-HANT"
    assert request.source is None and request.formality == "default" and request.model_type is None
    assert read(glossary_ids="a,b", source_lang="EN").glossary_ids == ("a", "b")
    assert not request.split_sentences  # 0: each item whole
    assert read(split_sentences="1").split_sentences and read(split_sentences="nonewlines").split_sentences
    assert read().split_sentences


@pytest.mark.parametrize(("fields", "message"), [
    ({"outline_detection": "maybe"}, "Value for 'outline_detection' not supported. Got 'maybe'; valid: 0, 1"),
    ({"tag_handling_version": "v3"}, "Value for 'tag_handling_version' not supported."),
    ({"formality": "polite"}, "Value for 'formality' not supported. Got 'polite'; valid: default, more, less"),
    ({"custom_instructions": ["x"] * 11}, "Value for 'custom_instructions' not supported. Got 11 instructions"),
    ({"custom_instructions": ["x" * 301]}, "An instruction has 301 characters; at most 300."),
])
def test_bad_values_in_deepls_words(fields, message):
    with pytest.raises(ApiError) as info:
        read(**fields)
    assert info.value.status == 400 and message in info.value.message
