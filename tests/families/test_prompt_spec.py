import pytest

from hymt.errors import InvalidInputError, UnknownLanguageError
from hymt.families import PromptSpec, canonical_template


def test_languages_are_resolved_from_codes_and_names():
    spec = PromptSpec("Hello", target="zh-TW", source="English")
    assert spec.target.code == "zh-Hant" and spec.source.code == "en"
    assert PromptSpec("Hello", target="de").source is None


@pytest.mark.parametrize("text", ["", "   ", "\n", None])
def test_blank_text_is_rejected(text):
    with pytest.raises(InvalidInputError) as info:
        PromptSpec(text, target="de")
    assert info.value.field == "text"


def test_unknown_languages_name_their_field():
    with pytest.raises(UnknownLanguageError) as info:
        PromptSpec("Hello", target="sv")
    assert info.value.field == "target"
    with pytest.raises(UnknownLanguageError) as info:
        PromptSpec("Hello", target="de", source="no")
    assert info.value.field == "source"


def test_template_names_are_canonicalised():
    assert PromptSpec("x", target="de", template="Background").template == "context"
    assert canonical_template(" FUSION ") == "fusion"
    with pytest.raises(InvalidInputError) as info:
        PromptSpec("x", target="de", template="poetry")
    assert info.value.field == "template"
    assert "terminology" in str(info.value) and "background" in str(info.value)


def test_glossary_accepts_pairs_and_mappings():
    assert PromptSpec("x", target="de", glossary={"a": "b"}).glossary == (("a", "b"),)
    assert PromptSpec("x", target="de", glossary=[["a", "b"], ("c", "d")]).glossary == (("a", "b"), ("c", "d"))


@pytest.mark.parametrize("bad", [[("a",)], [("a", "")], ["ab"], [("a", 1)]])
def test_bad_glossary_entries_are_rejected(bad):
    with pytest.raises(InvalidInputError) as info:
        PromptSpec("x", target="de", glossary=bad)
    assert info.value.field == "glossary"


def test_lists_of_strings():
    assert PromptSpec("x", target="de", candidates=["a", "b"]).candidates == ("a", "b")
    with pytest.raises(InvalidInputError) as info:
        PromptSpec("x", target="de", candidates="ab")
    assert info.value.field == "candidates"
    with pytest.raises(InvalidInputError) as info:
        PromptSpec("x", target="de", preferences=["ok", " "])
    assert info.value.field == "preferences"
    with pytest.raises(InvalidInputError) as info:
        PromptSpec("x", target="de", style=3)
    assert info.value.field == "style"
