"""make_options / template_for / sampling: validation and per-segment choices."""
from __future__ import annotations

import pytest

from hymt.engine.sampling import SamplingParams
from hymt.errors import InvalidInputError, UnknownLanguageError, UnsupportedTemplateError
from hymt.families import get_family
from hymt.translate.options import make_options, matching_terms, sampling_for, template_for

HYMT15 = get_family("HY-MT1.5-1.8B")
HMT = get_family("Hunyuan-MT-7B")
MT2 = get_family("Hy-MT2-1.8B")


def test_languages_validated_with_field_names():
    with pytest.raises(UnknownLanguageError) as err:
        make_options(HYMT15, "klingon")
    assert err.value.field == "to" and "zh-Hant" in str(err.value)
    with pytest.raises(UnknownLanguageError) as err:
        make_options(HYMT15, "de", "xx")
    assert err.value.field == "source"
    assert make_options(HYMT15, "zh-TW", "auto").target.code == "zh-Hant"
    assert make_options(HYMT15, "de", "English").source.code == "en"


def test_unsupported_templates_raise():
    with pytest.raises(UnsupportedTemplateError) as err:
        make_options(HYMT15, "de", template="style")
    assert "formatted" in str(err.value)
    with pytest.raises(UnsupportedTemplateError) as err:
        make_options(HMT, "de", glossary={"cat": "Katze"})
    assert err.value.field == "glossary"
    with pytest.raises(UnsupportedTemplateError):
        make_options(HYMT15, "de", style="formal")
    with pytest.raises(InvalidInputError):
        make_options(HYMT15, "de", template="nonsense")
    with pytest.raises(InvalidInputError) as err:
        make_options(HYMT15, "de", format="pdf")
    assert err.value.field == "format" and "srt" in str(err.value)


def test_glossary_word_boundaries():
    terms = (("cat", "Katze"), ("New York", "Neu York"), ("人工智能", "AI"))
    assert matching_terms("The cat sleeps.", terms) == (("cat", "Katze"),)
    assert matching_terms("Concatenate strings.", terms) == ()
    assert matching_terms("I love new york!", terms) == (("New York", "Neu York"),)
    assert matching_terms("我们研究人工智能技术。", terms) == (("人工智能", "AI"),)
    with pytest.raises(InvalidInputError):
        make_options(HYMT15, "de", glossary=[("cat",)])


def test_template_choice_per_segment():
    options = make_options(HYMT15, "de", glossary={"cat": "Katze"}, context="Earlier text.")
    assert template_for("A cat.", options) == ("terminology", (("cat", "Katze"),))
    assert template_for("A dog.", options) == ("context", ())
    assert template_for("A dog.", make_options(HYMT15, "de")) == ("default", ())
    assert template_for("A dog.", make_options(MT2, "de", style="formal")) == ("style", ())
    forced = make_options(HYMT15, "de", template="terminology", glossary={"cat": "Katze"})
    assert template_for("No match here.", forced) == ("default", ())


def test_sampling_defaults():
    default = sampling_for(make_options(HYMT15, "de"), HYMT15, lambda: 10)
    assert default.greedy and default.repetition_penalty == 1.05 and default.max_tokens == 94
    assert sampling_for(make_options(HYMT15, "de"), HYMT15, lambda: 5000).max_tokens == 2048
    official = sampling_for(make_options(HYMT15, "de", sampling="official"), HYMT15, lambda: 10)
    assert official.temperature == 0.7 and official.top_k == 20 and official.max_tokens == 94
    mine = SamplingParams(temperature=0.3, max_tokens=7)
    assert sampling_for(make_options(HYMT15, "de", sampling=mine), HYMT15, lambda: 10) is mine
    assert sampling_for(make_options(HYMT15, "de", sampling={"max_tokens": 9}), HYMT15, lambda: 10).max_tokens == 9
    with pytest.raises(InvalidInputError):
        make_options(HYMT15, "de", sampling="hot")
