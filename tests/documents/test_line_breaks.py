"""What a joined line break reads as, and line widths."""
from __future__ import annotations

from hymt.documents.line_breaks import display_width, first_word, join_separator


def test_spaceless_scripts_join_without_a_space():
    assert join_separator("中", "文") == ""
    assert join_separator("す", "。") == ""
    assert join_separator("한", "국") == " "
    assert join_separator("a", "b") == " "
    assert join_separator("中", "a") == " "
    assert join_separator("", "a") == " "


def test_display_width():
    assert display_width("abc") == 3
    assert display_width("中文") == 4
    assert display_width("e\u0301") == 1
    assert display_width("\tx") == 9


def test_first_word():
    assert first_word("hello world") == "hello"
    assert first_word("中文字") == "中"
    assert first_word("abc中") == "abc"
