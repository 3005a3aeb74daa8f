"""resolve_request / template_for: languages, templates per family, per-segment choices."""
from __future__ import annotations

import pytest

from hymt.errors import InvalidInputError, UnknownLanguageError, UnsupportedTemplateError
from hymt.families import get_family
from hymt.translate.options import TranslateOptions
from hymt.translate.request import resolve_request, template_for

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


def test_template_choice_per_segment():
    request = resolve(HYMT15, "de", glossary={"cat": "Katze"}, context="Earlier text.")
    assert template_for("A cat.", request) == ("terminology", (("cat", "Katze"),))
    assert template_for("A dog.", request) == ("context", ())
    assert template_for("A dog.", resolve(HYMT15, "de")) == ("default", ())
    assert template_for("A dog.", resolve(MT2, "de", style="formal")) == ("style", ())
    forced = resolve(HYMT15, "de", template="terminology", glossary={"cat": "Katze"})
    assert template_for("No match here.", forced) == ("default", ())
    structured = resolve(MT2, "de", template="structured", format_type="JSON")
    assert template_for('{"a": "b"}', structured) == ("structured", ())
