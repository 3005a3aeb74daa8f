"""TranslateOptions: one validated shape; keyword sugar converts into it in one place."""
from __future__ import annotations

import pytest

from hymt.engine.sampling import SamplingParams
from hymt.errors import InvalidInputError
from hymt.translate.options import TranslateOptions, options_with
from hymt.translate.sampling_policy import Sampling


def test_fields_are_normalised():
    options = TranslateOptions(glossary={" cat ": "Katze", "dog": "Hund"}, template="background", format="Markdown",
                               sampling="official")
    assert options.glossary == (("cat", "Katze"), ("dog", "Hund"))
    assert options.template == "context" and options.format == "markdown"
    assert options.sampling == Sampling(preset="official")
    assert TranslateOptions(sampling=SamplingParams(max_tokens=7)).sampling.max_tokens == 7


@pytest.mark.parametrize("fields, field", [
    ({"context": "  "}, "context"),
    ({"style": 3}, "style"),
    ({"format": "pdf-ish"}, "format"),
    ({"preferences": "one string"}, "preferences"),
    ({"use_cache": "yes"}, "use_cache"),
    ({"retry": 1}, "retry"),
    ({"split_sentences": "no"}, "split_sentences"),
    ({"sampling": {"top_p": 2.0}}, "sampling.top_p"),
])
def test_bad_values_name_their_field(fields, field):
    with pytest.raises(InvalidInputError) as err:
        TranslateOptions(**fields)
    assert err.value.field == field


def test_keywords_override_options():
    base = TranslateOptions(context="Before.", retry=False)
    merged = options_with(base, {"style": "formal", "glossary": {"a": "b"}})
    assert merged == TranslateOptions(context="Before.", retry=False, style="formal", glossary=(("a", "b"),))
    assert options_with(base, {"context": None}).context is None
    assert options_with(None, {}) == TranslateOptions()
    with pytest.raises(TypeError, match="glosary"):
        options_with(None, {"glosary": {}})
    assert base.replace(retry=True).retry is True
