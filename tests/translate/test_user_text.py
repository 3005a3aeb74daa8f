"""User text is text: special-token strings a user sends never become control tokens, and
cleanup keeps such strings where the source had them."""
from __future__ import annotations

import pytest

from hymt.translate.cleanup import StreamCleaner, clean_output

SPECIAL = "<｜hy_place▁holder▁no▁2｜>"  # the 1.8B stop token's text


@pytest.mark.parametrize("options", [{}, {"glossary": {SPECIAL: "x"}}, {"context": f"Before {SPECIAL}."}])
def test_special_token_text_is_never_a_control_token(make_translator, tiny_checkpoint, options):
    translator, engine = make_translator(answer=lambda user, params: "Hallo.")
    special_id = tiny_checkpoint.token_id(SPECIAL)
    assert special_id is not None
    translator.translate(f"Type {SPECIAL} to stop.", to="de", source="en", **options)
    user, _ = engine.prompts[-1]
    # decoding skips real special tokens: the string survives only as text
    assert user.count(SPECIAL) == 1 + sum(SPECIAL in str(v) for v in options.values())
    assert special_id not in engine.prompt_ids[-1]


def test_cleanup_keeps_special_looking_text_the_source_had():
    source = f"Press {SPECIAL} now."
    assert clean_output(f"Drücke {SPECIAL} jetzt.", source) == f"Drücke {SPECIAL} jetzt."
    assert clean_output(f"Drücke jetzt.{SPECIAL}", "Press now.") == "Drücke jetzt."
    cleaner = StreamCleaner(source)
    assert cleaner.feed(f"Drücke {SPECIAL} j") + cleaner.finish(f"Drücke {SPECIAL} jetzt.") == (
        f"Drücke {SPECIAL} jetzt.")


def test_a_typed_special_string_round_trips(make_translator):
    translator, engine = make_translator()  # answers with the source
    text = f"Write <|eos|> and {SPECIAL} literally."
    assert translator.translate(text, to="en", source="en").text == text
