"""Language codes as each protocol's clients write them (docs/reference/protocols.md §4).

Requests map through `hymt.languages.get_language`; responses echo the caller's own code
where the caller gave one, and otherwise (a detected language) use the protocol's style:
DeepL uppercase (`ZH`, `ZH-HANT`), LibreTranslate `zh-Hans` / `zh-Hant`, Immersive `zh-CN` /
`zh-TW`, hymt's own codes in the native API.
"""
from __future__ import annotations

from hymt.languages import LANGUAGES, Language

_LIBRE = {"zh": "zh-Hans", "zh-Hant": "zh-Hant"}
_IMMERSIVE = {"zh": "zh-CN", "zh-Hant": "zh-TW", "tl": "fil"}
# DeepL target variants for the languages that have them; sources use the base code.
_DEEPL_TARGET_VARIANTS = {"en": ("EN-GB", "EN-US"), "pt": ("PT-BR", "PT-PT"), "zh": ("ZH", "ZH-HANS")}


def code_for(lang: Language | None, style: str) -> str:
    """`lang` as a code in `style` ("hymt", "libretranslate", "deepl", "immersive")."""
    if lang is None:
        return "auto" if style != "deepl" else ""
    if style == "libretranslate":
        return _LIBRE.get(lang.code, lang.code)
    if style == "immersive":
        return _IMMERSIVE.get(lang.code, lang.code)
    if style == "deepl":
        return lang.code.upper()
    return lang.code


def deepl_languages(kind: str) -> list[dict]:
    """GET /v2/languages: one row per code a DeepL client may send for `kind` (source|target)."""
    rows = []
    for lang in LANGUAGES:
        codes = _DEEPL_TARGET_VARIANTS.get(lang.code, (lang.code.upper(),)) if kind == "target" else (lang.code.upper(),)
        for code in codes:
            row = {"language": code, "name": lang.english_name}
            if kind == "target":
                row["supports_formality"] = False
            rows.append(row)
    return rows


def libretranslate_languages() -> list[dict]:
    """GET /languages: every language can be translated into every other one."""
    codes = [code_for(lang, "libretranslate") for lang in LANGUAGES]
    return [
        {"code": code, "name": lang.english_name, "targets": [c for c in codes if c != code]}
        for code, lang in zip(codes, LANGUAGES)
    ]


def native_languages() -> list[dict]:
    """GET /api/languages: hymt's codes, names and the aliases clients may send."""
    return [
        {"code": lang.code, "name": lang.english_name, "chinese_name": lang.chinese_name,
         "aliases": list(lang.aliases), "scripts": list(lang.scripts)}
        for lang in LANGUAGES
    ]
