"""clean_output and StreamCleaner: leaked specials, <target>, think blocks, whitespace."""
from __future__ import annotations

import pytest

from hymt.translate.cleanup import StreamCleaner, clean_output

CASES = [
    ("Bonjour.<｜hy_place▁holder▁no▁2｜>", "Hello.", "Bonjour."),
    ("<|startoftext|>Hallo<|eos|>", "Hello", "Hallo"),
    ("<target><s1>你好</s1><s2>世界</s2></target>", "<s1>Hello</s1><s2>world</s2>", "<s1>你好</s1><s2>世界</s2>"),
    ("<think>\nreasoning here\n</think>\n\nHola.", "Hello.", "Hola."),
    ("<think>never closed", "Hello.", ""),
    ("  \n Ciao \n", "Hello", "Ciao"),
    ("Ciao ", " Hello ", "Ciao "),
    ("a < b and c > d", "a < b and c > d", "a < b and c > d"),
    ("<｜hy_User｜>Text<｜hy_Assistant｜>", "Text", "Text"),
    ("Ha\x00l\x0blo\tWelt\n\x1f.", "Hello\tworld\n.", "Hallo\tWelt\n."),  # controls no document holds
    ("A\x0cB", "page\x0cbreak", "A\x0cB"),  # unless the source has them
]


@pytest.mark.parametrize("raw,source,expected", CASES)
def test_clean_output(raw, source, expected):
    assert clean_output(raw, source) == expected


@pytest.mark.parametrize("raw,source,expected", CASES)
def test_stream_cleaner_pieces_join_to_clean_output(raw, source, expected):
    cleaner = StreamCleaner(source)
    pieces = [cleaner.feed(raw[:i]) for i in range(1, len(raw) + 1)]
    pieces.append(cleaner.finish(raw))
    assert "".join(pieces) == expected
    # nothing that is later removed was ever emitted
    assert all("<｜" not in p and "<target>" not in p and "think" not in p for p in pieces)
