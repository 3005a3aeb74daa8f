"""resolve_request / template_for: languages, templates per family, per-segment choices."""
from __future__ import annotations

import pytest

from hymt.errors import InvalidInputError, UnknownLanguageError, UnsupportedTemplateError
from hymt.families import get_family
from hymt.translate.options import TranslateOptions
from hymt.translate.request import TemplateChoice, resolve_request, template_for

HYMT15 = get_family("HY-MT1.5-1.8B")
HMT = get_family("Hunyuan-MT-7B")
MT2 = get_family("Hy-MT2-1.8B")
CHIMERA = get_family("Hunyuan-MT-Chimera-7B")


def resolve(family, to, source="auto", **fields):
    return resolve_request(family, to, source, TranslateOptions(**fields))


def test_languages_validated_with_field_names():
    with pytest.raises(UnknownLanguageError) as err:
        resolve(HYMT15, "klingon")
    assert err.value.field == "to" and "zh-Hant" in str(err.value)
    with pytest.raises(UnknownLanguageError) as err:
        resolve(HYMT15, "de", "xx")
    assert err.value.field == "source"
    assert resolve(HYMT15, "zh-TW", "auto").target.code == "zh-Hant"
    assert resolve(HYMT15, "de", "English").source.code == "en"


def test_unsupported_templates_raise():
    with pytest.raises(UnsupportedTemplateError) as err:
        resolve(HYMT15, "de", template="style")
    assert "formatted" in str(err.value)
    with pytest.raises(UnsupportedTemplateError) as err:
        resolve(HMT, "de", glossary={"cat": "Katze"})
    assert err.value.field == "glossary"
    with pytest.raises(UnsupportedTemplateError):
        resolve(HYMT15, "de", style="formal")
    with pytest.raises(InvalidInputError):
        resolve(HYMT15, "de", template="nonsense")
    with pytest.raises(InvalidInputError) as err:
        resolve(HYMT15, "de", format="pdf")
    assert err.value.field == "format" and "srt" in str(err.value)


def test_templates_with_inputs_need_them():
    with pytest.raises(InvalidInputError) as err:
        resolve(MT2, "de", template="structured")
    assert err.value.field == "format_type"
    with pytest.raises(InvalidInputError) as err:
        resolve(MT2, "de", template="personalization")
    assert err.value.field == "preferences"
    with pytest.raises(InvalidInputError) as err:
        resolve(CHIMERA, "de", "en", template="fusion")
    assert err.value.field == "candidates"
    with pytest.raises(InvalidInputError) as err:
        resolve(CHIMERA, "de", template="fusion", candidates=["a", "b"])
    assert err.value.field == "source"
    with pytest.raises(InvalidInputError) as err:  # an input without its template does nothing: say so
        resolve(MT2, "de", preferences=["Keep it short."])
    assert err.value.field == "preferences" and "personalization" in str(err.value)


def choose(text, family, **fields):
    return template_for(text, resolve(family, "de", **fields), family)


def test_template_choice_per_segment():
    both = {"glossary": {"cat": "Katze"}, "context": "Earlier text."}
    assert choose("A cat.", HYMT15, **both) == TemplateChoice("terminology", (("cat", "Katze"),))
    assert choose("A dog.", HYMT15, **both) == TemplateChoice("context", context="Earlier text.")
    assert choose("A dog.", HYMT15) == TemplateChoice("default")
    assert choose("A dog.", MT2, style="formal") == TemplateChoice("style")
    assert choose("No match here.", HYMT15, template="terminology", glossary={"cat": "Katze"}) == TemplateChoice(
        "default")
    assert choose('{"a": "b"}', MT2, template="structured", format_type="JSON") == TemplateChoice(
        "structured", format_type="JSON")


def test_tagged_segments_use_the_family_template_for_tags():
    tagged = "Please <s1>do not</s1> reply."
    request = resolve(HYMT15, "de")
    assert template_for(tagged, request, HYMT15, tagged=True) == TemplateChoice("formatted")
    assert template_for(tagged, resolve(MT2, "de"), MT2, tagged=True) == TemplateChoice(
        "structured", format_type="XML")
    assert template_for(tagged, resolve(HMT, "de"), HMT, tagged=True) == TemplateChoice("default")
    with_terms = resolve(HYMT15, "de", glossary={"reply": "antworten"})
    assert template_for(tagged, with_terms, HYMT15, tagged=True).name == "terminology"


def test_a_units_context_joins_the_calls_context():
    request = resolve(HYMT15, "de", context="A film.")
    choice = template_for("and then he left.", request, HYMT15, unit_context="He opened the door")
    assert choice == TemplateChoice("context", context="A film.\nHe opened the door")
    assert template_for("x y z", resolve(HMT, "de"), HMT, unit_context="Before.") == TemplateChoice("default")
