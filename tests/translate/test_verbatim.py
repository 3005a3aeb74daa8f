"""The forms of text that are right to keep as they are: code, commands, names, numbers."""
from __future__ import annotations

import pytest

from hymt.translate.verbatim import has_letters, is_sentence, looks_like_code, looks_like_command, looks_like_name


@pytest.mark.parametrize("text", [
    "https://example.com/docs/getting-started",
    "Contact: support@example.com",
    "docker run -it --rm ubuntu bash",
    "/etc/nginx/sites-available/default",
    "SELECT name, email FROM users WHERE active = 1;",
    'print("Hello, world!")',
    "config_file_path",
    "README.md",
])
def test_code(text):
    assert looks_like_code(text)


@pytest.mark.parametrize("text", [
    "Click File > Open to continue.",  # a sentence that mentions code
    "I came; I saw; I conquered.",
    "请访问 https://example.com 了解详情",  # mostly not ASCII
    "pip install hymt",  # no code token: a command only when the detector finds no language
    "Good morning, my friend.",
])
def test_not_code(text):
    assert not looks_like_code(text)


def test_commands_are_short_lowercase_ascii_words():
    assert looks_like_command("pip install hymt") and looks_like_command("npm run build")
    assert not looks_like_command("Thank you very much")
    assert not looks_like_command("hello there, friend.")
    assert not looks_like_command("one two three four five six seven")


@pytest.mark.parametrize("text", [
    "Microsoft Visual Studio Code",
    "iPhone 15 Pro Max",
    "Ludwig van Beethoven",
    "Universidad Nacional Autónoma de México",
    "221B Baker Street, London NW1 6XE",
    "Apple Inc.",
    "2024-05-01 12:30 UTC",
])
def test_names(text):
    assert looks_like_name(text)


@pytest.mark.parametrize("text", [
    "Good morning, my friend.",
    "The Meeting Starts Now.",  # a sentence, however capitalised
    "pip install hymt",
    "One Two Three Four Five Six Seven Eight Nine Ten Eleven",
    "北京大学",  # Han is a name only for a target that writes Han
])
def test_not_names(text):
    assert not looks_like_name(text)


def test_han_names_for_a_han_target():
    assert looks_like_name("北京大学", han_target=True)
    assert not looks_like_name("今天天气很好。", han_target=True)
    assert not looks_like_name("我明天要去北京出差了", han_target=True)  # longer than a name


def test_sentences_and_letters():
    assert is_sentence("It is done.") and is_sentence("Где ты?") and is_sentence("好的。")
    assert not is_sentence("Apple Inc.") and not is_sentence("Samsung Galaxy S24")
    assert not has_letters("+49 30 1234 5678") and has_letters("12:30 UTC")
