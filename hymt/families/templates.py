"""The official prompt texts, verbatim (docs/reference/models.md §7). Data, not code.

Byte-exact: full-width `，：。【】、（）` in Chinese texts, half-width in English ones, a blank
line is "\\n\\n", no trailing newline (a template "ends" where its code block ends). Placeholders
keep the spelling of their source (`<target_language>`, `{target_language}`, `{target_lang}`)
and are filled by prompts.fill (one pass of plain replacement, never str.format: Structured
Data 1 contains a literal `{{var}}` and `${var}`).

Templates with a variable number of lines (glossary terms, candidates, preferences) are split
into a head, a per-item line and a tail; prompts.py joins them with "\\n".
"""
from __future__ import annotations

# §7.1 Hunyuan-MT-7B (and Chimera's plain translation) ---------------------------------------
HMT_DEFAULT_ZH = "把下面的文本翻译成<target_language>，不要额外解释。\n\n<source_text>"
HMT_DEFAULT_EN = "Translate the following segment into <target_language>, without additional explanation.\n\n<source_text>"

# §7.2 HY-MT1.5 ------------------------------------------------------------------------------
HYMT15_DEFAULT_ZH = "将以下文本翻译为{target_language}，注意只需要输出翻译后的结果，不要额外解释：\n\n{source_text}"
HYMT15_DEFAULT_EN = "Translate the following segment into {target_language}, without additional explanation.\n\n{source_text}"
HYMT15_TERMS_HEAD = "参考下面的翻译："
HYMT15_TERMS_LINE = "{source_term} 翻译成 {target_term}"
HYMT15_TERMS_TAIL = "\n将以下文本翻译为{target_language}，注意只需要输出翻译后的结果，不要额外解释：\n{source_text}"
# The README block ends with one blank line after {source_text}: hence the trailing "\n".
HYMT15_CONTEXT = (
    "{context}\n参考上面的信息，把下面的文本翻译成{target_language}，注意不需要翻译上文，也不要额外解释：\n{source_text}\n"
)
# The official text fixes the target to 中文 ("翻译为中文"). The template is Chinese, so for
# other targets we put the target's Chinese name where 中文 stands; for zh it is the official text.
HYMT15_FORMATTED = (
    "将以下<source></source>之间的文本翻译为{target_language}，注意只需要输出翻译后的结果，不要额外解释，"
    "原文中的<sn></sn>标签表示标签内文本包含格式信息，需要在译文中相应的位置尽量保留该标签。"
    "输出格式为：<target>str</target>\n\n<source>{src_text_with_format}</source>"
)

# §7.3 Hunyuan-MT-Chimera-7B fusion (English names only) --------------------------------------
FUSION_HEAD = (
    "Analyze the following multiple <target_language> translations of the <source_language> segment "
    "surrounded in triple backticks and generate a single refined <target_language> translation. "
    "Only output the refined translation, do not explain.\n\n"
    "The <source_language> segment:\n```<source_text>```\n\n"
    "The multiple <target_language> translations:"
)
FUSION_LINE = "<n>. ```<translated_text>```"

# §7.4 Hy-MT2 --------------------------------------------------------------------------------
MT2_DEFAULT_ZH = "将以下文本翻译为{target_lang}，注意只需要输出翻译后的结果，不要额外解释：\n\n{source_text}"
MT2_DEFAULT_EN = (
    "Translate the following text into {target_lang}. Note that you should only output the translated "
    "result without any additional explanation:\n\n{source_text}"
)
MT2_TERMS_HEAD_ZH = "参考下面的翻译："
MT2_TERMS_LINE_ZH = "{source_term} 翻译成 {target_term}"  # published as `{text} 翻译成 {text}`
MT2_TERMS_TAIL_ZH = "将以下文本翻译为{target_lang}，注意只需要输出翻译后的结果，不要额外解释：\n\n{source_text}"
MT2_TERMS_HEAD_EN = "Reference the following translations:"
MT2_TERMS_LINE_EN = "{source_term} translates to {target_term}"  # published as `{text} translates to {text}`
MT2_TERMS_TAIL_EN = (
    "\nTranslate the following text into {target_lang}. Note that you must ONLY output the translated "
    "result without any additional explanation:\n\n{source_text}"
)
MT2_STYLE_ZH = "请将以下文本翻译为{target_lang}。\n注意翻译的风格要严格符合【{target_style}】\n\n{source_text}"
MT2_STYLE_EN = (
    "Please translate the following text into {target_lang}. Note that the translation style must "
    "strictly conform to [{target_style}]:\n\n{source_text}"
)
MT2_PERSONAL_HEAD_ZH = "【待翻译文本】\n{source_text}\n\n【翻译任务】"
MT2_PERSONAL_LINE_ZH = "{n}、{user_preferences}"
MT2_PERSONAL_LAST_ZH = "{n}、将【待翻译文本】翻译为{target_lang}。"
MT2_PERSONAL_HEAD_EN = "[Source Text]\n{source_text}\n\n[Translation Tasks]"
MT2_PERSONAL_LINE_EN = "{n}. {user_preferences}"
MT2_PERSONAL_LAST_EN = "{n}. Translate the [Source Text] into {target_lang}."
MT2_DELIMITERS_ZH = (
    "请将以下文本准确翻译为{target_lang}。\n"
    "你必须在译文中保留等量的分隔符，绝对不可遗漏、转义或翻译该符号，并注意分隔符的位置。\n\n{source_text}"
)
MT2_DELIMITERS_EN = (
    "Please accurately translate the following text into {target_lang}.\n"
    "You must retain the exact same number of delimiters in the translation. Strictly do not omit, "
    "escape, or translate these symbols, and pay close attention to their placement.\n\n{source_text}"
)
# {source_text} appears twice in the published ZH text (first line and end); plain replacement
# fills both, as the published template reads.
MT2_STRUCTURED_ZH = (
    "# 任务目标\n将下方{source_text}中的{format_type}格式数据翻译为{target_lang}。\n\n"
    "# 严格约束\n"
    "1. **结构锁定**：绝对保持原有的{format_type}数据结构、缩进和层级完全不变。\n"
    "2. **选择性翻译**：仅翻译面向用户展示的可见文本内容。\n"
    "3. **禁止修改**：**严禁**翻译或更改任何代码标签、键名 (Key)、变量占位符（如 {{var}}、${var}、%s、%d 等）或代码属性。\n\n"
    "# 数据输入\n{source_text}"
)
MT2_STRUCTURED_EN = (
    "### Task\nTranslate the user-facing text within the following {format_type} data into {target_lang}.\n\n"
    "### Strict Rules\n"
    "1. **Structure Preservation:** You MUST preserve the original {format_type} data structure, nesting, "
    "hierarchy, and indentation exactly as they are.\n"
    "2. **Selective Translation:** Translate ONLY the visible, user-facing text content/values.\n"
    "3. **Strict Non-Translation:** NEVER translate or alter code tags, keys, properties, object names, or "
    "variable placeholders. Leave them exactly in their original English/code form.\n\n"
    "### Source Data\n{source_text}"
)
MT2_BACKGROUND_ZH = "【背景信息】\n{background_text}\n\n请结合背景信息将以下文本翻译为{target_lang}。\n\n【待翻译文本】\n{source_text}"
MT2_BACKGROUND_EN = (
    "[Background Information]\n{background_text}\n\n"
    "Please translate the following text into {target_lang}, taking the provided background information "
    "into consideration.\n\n[Source Text]\n{source_text}"
)
