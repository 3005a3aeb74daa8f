"""Prompt texts against literal strings written out from docs/reference/models.md §7."""
import pytest

from hymt.errors import InvalidInputError, UnsupportedTemplateError
from hymt.families import PromptSpec, build_prompt, get_family

HMT = get_family("Hunyuan-MT-7B")
CHIMERA = get_family("Hunyuan-MT-Chimera-7B")
HYMT15 = get_family("HY-MT1.5-1.8B")
HYMT15_7B = get_family("HY-MT1.5-7B")
MT2 = get_family("Hy-MT2-1.8B")
MT2_7B = get_family("Hy-MT2-7B")


def prompt(family, text, target, source=None, **kw):
    return build_prompt(family, PromptSpec(text, target=target, source=source, **kw))


# Hunyuan-MT-7B -------------------------------------------------------------------------------
def test_hunyuan_mt_default_zh_and_en():
    assert prompt(HMT, "Hello", "zh", "en") == "把下面的文本翻译成中文，不要额外解释。\n\nHello"
    assert prompt(HMT, "你好", "en", "zh") == "把下面的文本翻译成英语，不要额外解释。\n\n你好"
    assert prompt(HMT, "Hello", "de", "en") == (
        "Translate the following segment into German, without additional explanation.\n\nHello"
    )


def test_hunyuan_mt_has_only_default():
    with pytest.raises(UnsupportedTemplateError) as info:
        prompt(HMT, "Hello", "zh", template="terminology", glossary=[("a", "b")])
    assert "Hunyuan-MT-7B" in str(info.value) and "default" in str(info.value)
    assert info.value.field == "template"


# Chimera ---------------------------------------------------------------------------------------
def test_chimera_fusion_english_names_numbered_candidates():
    assert prompt(CHIMERA, "你好，世界", "en", "zh", template="fusion", candidates=["Hello, world", "Hi world"]) == (
        "Analyze the following multiple English translations of the Chinese segment surrounded in triple "
        "backticks and generate a single refined English translation. Only output the refined translation, "
        "do not explain.\n\n"
        "The Chinese segment:\n```你好，世界```\n\n"
        "The multiple English translations:\n1. ```Hello, world```\n2. ```Hi world```"
    )


def test_chimera_fusion_any_count_and_default():
    one = prompt(CHIMERA, "Hallo", "fr", "de", template="fusion", candidates=["Bonjour"])
    assert one.endswith("The multiple French translations:\n1. ```Bonjour```")
    many = prompt(CHIMERA, "Hallo", "fr", "de", template="fusion", candidates=[f"c{i}" for i in range(1, 8)])
    assert many.endswith("\n6. ```c6```\n7. ```c7```")
    assert prompt(CHIMERA, "Hello", "zh") == "把下面的文本翻译成中文，不要额外解释。\n\nHello"


def test_fusion_needs_candidates_and_source():
    with pytest.raises(InvalidInputError) as info:
        prompt(CHIMERA, "Hallo", "fr", "de", template="fusion")
    assert info.value.field == "candidates"
    with pytest.raises(InvalidInputError) as info:
        prompt(CHIMERA, "Hallo", "fr", template="fusion", candidates=["Bonjour"])
    assert info.value.field == "source"


# HY-MT1.5 --------------------------------------------------------------------------------------
@pytest.mark.parametrize("family", [HYMT15, HYMT15_7B])
def test_hymt15_default_zh_and_en(family):
    assert prompt(family, "Hello", "zh") == (
        "将以下文本翻译为中文，注意只需要输出翻译后的结果，不要额外解释：\n\nHello"
    )
    assert prompt(family, "Bonjour", "en", "fr") == (
        "Translate the following segment into English, without additional explanation.\n\nBonjour"
    )
    assert prompt(family, "你好", "ja", "zh") == (
        "将以下文本翻译为日语，注意只需要输出翻译后的结果，不要额外解释：\n\n你好"
    )


def test_hymt15_terminology_one_line_per_entry():
    assert prompt(HYMT15, "AI runs on a GPU.", "zh", template="terminology",
                  glossary=[("AI", "人工智能"), ("GPU", "显卡")]) == (
        "参考下面的翻译：\nAI 翻译成 人工智能\nGPU 翻译成 显卡\n\n"
        "将以下文本翻译为中文，注意只需要输出翻译后的结果，不要额外解释：\nAI runs on a GPU."
    )


def test_hymt15_terminology_is_chinese_even_for_xx_pairs():
    assert prompt(HYMT15, "AI", "de", "en", template="terminology", glossary={"AI": "KI"}) == (
        "参考下面的翻译：\nAI 翻译成 KI\n\n"
        "将以下文本翻译为德语，注意只需要输出翻译后的结果，不要额外解释：\nAI"
    )


def test_hymt15_context():
    assert prompt(HYMT15, "Next line.", "zh", template="context", context="Previous line.") == (
        "Previous line.\n参考上面的信息，把下面的文本翻译成中文，注意不需要翻译上文，也不要额外解释：\nNext line.\n"
    )
    assert prompt(HYMT15_7B, "B", "fr", "en", template="context", context="A") == (
        "A\n参考上面的信息，把下面的文本翻译成法语，注意不需要翻译上文，也不要额外解释：\nB\n"
    )


def test_hymt15_formatted_official_text_for_chinese_and_substituted_otherwise():
    assert prompt(HYMT15, "<s1>Hello</s1> world", "zh", template="formatted") == (
        "将以下<source></source>之间的文本翻译为中文，注意只需要输出翻译后的结果，不要额外解释，"
        "原文中的<sn></sn>标签表示标签内文本包含格式信息，需要在译文中相应的位置尽量保留该标签。"
        "输出格式为：<target>str</target>\n\n<source><s1>Hello</s1> world</source>"
    )
    assert prompt(HYMT15, "<s1>Hi</s1>", "ja", "en", template="formatted").startswith(
        "将以下<source></source>之间的文本翻译为日语，注意"
    )


def test_hymt15_has_no_hy_mt2_templates():
    with pytest.raises(UnsupportedTemplateError) as info:
        prompt(HYMT15, "Hello", "zh", template="style", style="formal")
    message = str(info.value)
    assert "HY-MT1.5-1.8B" in message
    assert all(name in message for name in ("context", "default", "formatted", "terminology"))


# Hy-MT2 ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("family", [MT2, MT2_7B])
def test_mt2_default_zh_and_en(family):
    assert prompt(family, "Hello", "zh", "en") == (
        "将以下文本翻译为中文，注意只需要输出翻译后的结果，不要额外解释：\n\nHello"
    )
    assert prompt(family, "Hello", "de", "en") == (
        "Translate the following text into German. Note that you should only output the translated result "
        "without any additional explanation:\n\nHello"
    )


def test_mt2_terminology_zh_and_en():
    assert prompt(MT2, "AI runs.", "zh", template="terminology", glossary=[("AI", "人工智能"), ("run", "运行")]) == (
        "参考下面的翻译：\nAI 翻译成 人工智能\nrun 翻译成 运行\n"
        "将以下文本翻译为中文，注意只需要输出翻译后的结果，不要额外解释：\n\nAI runs."
    )
    assert prompt(MT2, "AI runs.", "de", "en", template="terminology", glossary=[("AI", "KI")]) == (
        "Reference the following translations:\nAI translates to KI\n\n"
        "Translate the following text into German. Note that you must ONLY output the translated result "
        "without any additional explanation:\n\nAI runs."
    )


def test_mt2_context_is_the_background_template():
    zh = prompt(MT2, "Text", "zh", template="context", context="BG")
    assert zh == "【背景信息】\nBG\n\n请结合背景信息将以下文本翻译为中文。\n\n【待翻译文本】\nText"
    assert prompt(MT2, "Text", "zh", template="background", context="BG") == zh
    assert prompt(MT2_7B, "Text", "de", template="context", context="BG") == (
        "[Background Information]\nBG\n\nPlease translate the following text into German, taking the provided "
        "background information into consideration.\n\n[Source Text]\nText"
    )


def test_mt2_style():
    assert prompt(MT2, "Hello", "zh", template="style", style="正式") == (
        "请将以下文本翻译为中文。\n注意翻译的风格要严格符合【正式】\n\nHello"
    )
    assert prompt(MT2, "Hello", "de", template="style", style="formal") == (
        "Please translate the following text into German. Note that the translation style must strictly "
        "conform to [formal]:\n\nHello"
    )


def test_mt2_personalization_numbers_preferences_then_the_instruction():
    assert prompt(MT2, "Hello", "zh", template="personalization", preferences=["保留专有名词", "使用敬语"]) == (
        "【待翻译文本】\nHello\n\n【翻译任务】\n1、保留专有名词\n2、使用敬语\n3、将【待翻译文本】翻译为中文。"
    )
    assert prompt(MT2, "Hello", "de", template="personalization", preferences=["Keep names"]) == (
        "[Source Text]\nHello\n\n[Translation Tasks]\n1. Keep names\n2. Translate the [Source Text] into German."
    )


def test_mt2_delimiters():
    assert prompt(MT2, "a<SEP>b", "zh", template="delimiters") == (
        "请将以下文本准确翻译为中文。\n你必须在译文中保留等量的分隔符，绝对不可遗漏、转义或翻译该符号，"
        "并注意分隔符的位置。\n\na<SEP>b"
    )
    assert prompt(MT2, "a<SEP>b", "de", template="delimiters") == (
        "Please accurately translate the following text into German.\nYou must retain the exact same number of "
        "delimiters in the translation. Strictly do not omit, escape, or translate these symbols, and pay close "
        "attention to their placement.\n\na<SEP>b"
    )


def test_mt2_structured_keeps_literal_braces():
    data = '{"title": "Hi {{name}}"}'
    assert prompt(MT2, data, "zh", template="structured", format_type="JSON") == (
        # the first line names the input section; the data goes in once, under it
        "# 任务目标\n将下方数据输入中的JSON格式数据翻译为中文。\n\n# 严格约束\n"
        "1. **结构锁定**：绝对保持原有的JSON数据结构、缩进和层级完全不变。\n"
        "2. **选择性翻译**：仅翻译面向用户展示的可见文本内容。\n"
        "3. **禁止修改**：**严禁**翻译或更改任何代码标签、键名 (Key)、变量占位符（如 {{var}}、${var}、%s、%d 等）"
        "或代码属性。\n\n# 数据输入\n" + data
    )
    assert prompt(MT2, data, "de", template="structured", format_type="YAML") == (
        "### Task\nTranslate the user-facing text within the following YAML data into German.\n\n"
        "### Strict Rules\n1. **Structure Preservation:** You MUST preserve the original YAML data structure, "
        "nesting, hierarchy, and indentation exactly as they are.\n"
        "2. **Selective Translation:** Translate ONLY the visible, user-facing text content/values.\n"
        "3. **Strict Non-Translation:** NEVER translate or alter code tags, keys, properties, object names, or "
        "variable placeholders. Leave them exactly in their original English/code form.\n\n"
        "### Source Data\n" + data
    )


def test_mt2_has_no_formatted_or_fusion():
    for template in ("formatted", "fusion"):
        with pytest.raises(UnsupportedTemplateError):
            prompt(MT2, "Hello", "zh", "en", template=template, candidates=["x"])


# Template choice, names, filling -------------------------------------------------------------------
@pytest.mark.parametrize(
    "source, target, chinese",
    [(None, "zh", True), (None, "de", False), ("zh", "de", True), ("yue", "en", True), ("zh-TW", "fr", True),
     ("en", "zh-Hant", True), ("en", "yue", True), ("ja", "ko", False)],
)
def test_chinese_template_when_source_or_target_is_chinese(source, target, chinese):
    text = prompt(MT2, "x", target, source)
    assert text.startswith("将以下文本翻译为") is chinese
    assert text.startswith("Translate the following text into") is not chinese


def test_names_not_codes():
    assert prompt(MT2, "x", "zh-Hant", "en").startswith("将以下文本翻译为繁体中文，")
    assert prompt(MT2, "x", "yue").startswith("将以下文本翻译为粤语，")
    assert prompt(MT2, "x", "tl", "en").startswith("Translate the following text into Filipino.")
    assert prompt(HMT, "x", "fil", "ja").startswith("Translate the following segment into Filipino,")


def test_user_text_with_placeholders_is_not_refilled():
    text = "Keep {target_lang}, <target_language>, {source_text} and {{var}} as is."
    assert prompt(MT2, text, "de").endswith("\n\n" + text)
    assert prompt(HMT, text, "de").endswith("\n\n" + text)
    glossary_text = prompt(MT2, "x", "de", template="terminology", glossary=[("{target_lang}", "{source_text}")])
    assert "{target_lang} translates to {source_text}\n" in glossary_text


def test_family_by_name_string():
    assert build_prompt("hy-mt2-7b", PromptSpec("Hello", target="de")) == prompt(MT2_7B, "Hello", "de")


@pytest.mark.parametrize(
    "template, field",
    [("terminology", "glossary"), ("context", "context"), ("style", "style"),
     ("personalization", "preferences"), ("structured", "format_type")],
)
def test_missing_template_inputs_name_the_field(template, field):
    with pytest.raises(InvalidInputError) as info:
        prompt(MT2, "Hello", "zh", template=template)
    assert info.value.field == field
