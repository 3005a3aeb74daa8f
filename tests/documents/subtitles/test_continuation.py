"""Which cue continues the sentence of the cue before it, and the context it gets."""
from __future__ import annotations

import pytest

from hymt.documents.subtitles.continuation import MAX_CONTEXT_CUES, CueLine, contexts, continues


@pytest.mark.parametrize("previous, text, expected", [
    ("I never thought", "we would see him.", True),  # no end punctuation
    ("He left.", "and never came back.", True),  # lower case
    ("I was going to...", "...go home.", True),  # ellipsis
    ("I was going to…", "…go home.", True),
    ("Are you sure?", "Yes.", False),
    ('He said "stop."', "Why?", False),  # end punctuation inside closing quotes
    ("- Fine.", "- Good.", False),
    ("今天天气真好。", "我们去公园吧！", False),
    ("我觉得", "他不会来了。", True),
    ("[DOOR SLAMS]", "Who's there?", False),  # a caption all in brackets
    ("(sighs)", "Fine.", False),
    ("Wait...", "What?", False),
    ("- Where are you going", "- Home.", True),
])
def test_continues(previous, text, expected):
    assert continues(previous, text) is expected


def test_context_holds_the_earlier_cues_of_the_sentence():
    cues = [CueLine("Hello."), CueLine("I never thought"), CueLine("that we would"), CueLine("see him again."),
            CueLine("Never.")]
    assert contexts(cues) == ["", "", "I never thought", "I never thought that we would", ""]


def test_context_is_capped():
    cues = [CueLine(f"word{n}") for n in range(10)]
    found = contexts(cues)
    assert found[1] == "word0"
    assert found[9] == " ".join(f"word{n}" for n in range(9 - MAX_CONTEXT_CUES, 9))


def test_context_follows_cues_of_the_same_key():
    cues = [CueLine("I never thought", "Default"), CueLine("EXIT", "Sign"), CueLine("we would meet.", "Default"),
            CueLine("DANGER", "Sign")]
    assert contexts(cues) == ["", "", "I never thought", "EXIT"]
