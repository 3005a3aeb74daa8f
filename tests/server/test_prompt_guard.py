"""The OpenAI prompt guard's decisions, on the prompts real clients send (pure functions)."""
from __future__ import annotations

import pytest

from hymt.families import PromptSpec, build_prompt, get_family
from hymt.languages import get_language
from hymt.server.protocols.prompt_guard import is_official, plan, split_paragraphs


def _user(text, system=None):
    messages = [{"role": "system", "content": system}] if system else []
    return messages + [{"role": "user", "content": text}]


@pytest.mark.parametrize("family", ["HY-MT1.5-1.8B", "Hy-MT2-1.8B", "Hunyuan-MT-7B"])
@pytest.mark.parametrize("target", ["zh", "de"])
def test_official_templates_are_recognised(family, target):
    prompt = build_prompt(get_family(family), PromptSpec("Some text.\n\nMore text.", target=target))
    assert is_official(prompt)
    assert plan(_user(prompt)).kind == "official"


def test_official_terminology_and_context_prompts_are_recognised():
    fam = get_family("HY-MT1.5-1.8B")
    terms = build_prompt(fam, PromptSpec("A cat.", target="zh", template="terminology", glossary=(("cat", "猫"),)))
    context = build_prompt(fam, PromptSpec("A cat.", target="zh", template="context", context="Pets."))
    assert is_official(terms) and is_official(context)


def test_generic_instruction_with_text_after_colon():
    guard = plan(_user("Translate the following text from English into German:\n\nFirst.\n\nSecond."))
    assert guard.kind == "generic"
    assert guard.target == get_language("de") and guard.source == get_language("en")
    assert guard.paragraphs == ("First.", "Second.") and guard.separators == ("\n\n", "")
    assert guard.join(["Erstens.", "Zweitens."]) == "Erstens.\n\nZweitens."


def test_kiss_and_immersive_style_prompts():
    kiss = ("Translate the following source text from English to Simplified Chinese. Output translation directly "
            "without any additional text.\n\nSource Text: Good morning.\n\nTranslated Text:")
    guard = plan(_user(kiss, system="You are a professional, authentic machine translation engine."))
    assert guard.kind == "generic" and guard.target.code == "zh" and guard.paragraphs == ("Good morning.",)
    immersive = ("Translate the following source text to French, Output translation directly.\n"
                 "Source Text: A\n%%\nB\nTranslated Text:")
    guard = plan(_user(immersive))
    assert guard.target.code == "fr" and guard.paragraphs == ("A", "B") and guard.separators[0] == "\n%%\n"


def test_instruction_in_system_message_translates_the_whole_user_turn():
    guard = plan(_user("Line one.\n\nLine two.", system="You translate everything the user says into Japanese."))
    assert guard.kind == "generic" and guard.target.code == "ja"
    assert guard.paragraphs == ("Line one.", "Line two.")


def test_chinese_instruction_and_fenced_text():
    guard = plan(_user("请把下面的内容翻译成英文：\n```\n你好，世界。\n```"))
    assert guard.kind == "generic" and guard.target.code == "en" and guard.paragraphs == ("你好，世界。",)


def test_pot_style_triple_quotes():
    guard = plan(_user('Translate into Traditional Chinese:\n"""\nHello there\n"""'))
    assert guard.target.code == "zh-Hant" and guard.paragraphs == ("Hello there",)


@pytest.mark.parametrize("text", [
    "What is the capital of France?",
    "How do I translate a Python script to JavaScript?",
    "Translate into German:",  # an instruction without text
])
def test_other_chats_are_left_alone(text):
    assert plan(_user(text)).kind == "chat"


def test_multi_turn_conversations_are_chats():
    messages = [{"role": "user", "content": "Translate to German: hi"}, {"role": "assistant", "content": "hallo"},
                {"role": "user", "content": "Translate to German: bye"}]
    assert plan(messages).kind == "chat"


def test_split_paragraphs_keeps_separators_byte_exact():
    text = "A\n\n\nB\n%%\nC  \n \nD"
    paragraphs, separators = split_paragraphs(text)
    assert "".join(p + s for p, s in zip(paragraphs, separators)) == text
    assert paragraphs == ["A", "B", "C", "D"]
