"""Language codes as each protocol's clients write them (docs/reference/protocols.md §4).

Requests map through `hymt.languages.get_language`; responses echo the caller's own code
where the caller gave one, and otherwise (a detected language) use the protocol's style:
DeepL uppercase (`ZH`, `ZH-HANT`), LibreTranslate `zh-Hans` / `zh-Hant`, Immersive `zh-CN` /
`zh-TW`, hymt's own codes in the native API. DeepL glossaries name their languages in lower
case (`en`, `de`, `zh-hant`), as DeepL answers them.
"""
from __future__ import annotations

from hymt.languages import LANGUAGES, Language

_LIBRE = {"zh": "zh-Hans", "zh-Hant": "zh-Hant"}
_IMMERSIVE = {"zh": "zh-CN", "zh-Hant": "zh-TW", "tl": "fil"}
# DeepL target variants for the languages that have them; sources use the base code.
_DEEPL_TARGET_VARIANTS = {"en": ("EN-GB", "EN-US"), "pt": ("PT-BR", "PT-PT"), "zh": ("ZH", "ZH-HANS")}
# A glossary for the base language also serves its variant (DeepL: a ZH glossary serves ZH-HANT).
_DEEPL_GLOSSARY_BASE = {"zh-Hant": "zh"}


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


def deepl_languages(kind: str, *, formality: bool = False) -> list[dict]:
    """GET /v2/languages: one row per code a DeepL client may send for `kind` (source|target);
    `formality`: the model honours DeepL's formality (its family has a style template)."""
    rows = []
    for lang in LANGUAGES:
        base = (lang.code.upper(),)
        for code in _DEEPL_TARGET_VARIANTS.get(lang.code, base) if kind == "target" else base:
            row: dict[str, object] = {"language": code, "name": lang.english_name}
            if kind == "target":
                row["supports_formality"] = formality
            rows.append(row)
    return rows


def deepl_codes(kind: str) -> list[str]:
    """The codes `deepl_languages(kind)` lists (for error messages)."""
    return [str(row["language"]) for row in deepl_languages(kind)]


def deepl_glossary_code(lang: Language) -> str:
    """A language as DeepL's glossary calls write it: lower case."""
    return lang.code.lower()


def deepl_glossary_pairs() -> list[dict[str, str]]:
    """GET /v2/glossary-language-pairs: every ordered pair of two different languages."""
    codes = [deepl_glossary_code(lang) for lang in LANGUAGES]
    return [{"source_lang": s, "target_lang": t} for s in codes for t in codes if s != t]


def deepl_glossary_lookups(source: Language, target: Language) -> list[tuple[str, str]]:
    """The glossary dictionaries that serve a translation, best first: the exact pair, then
    the base language of a variant (zh-Hant -> zh)."""
    sources = dict.fromkeys((source.code, _DEEPL_GLOSSARY_BASE.get(source.code, source.code)))
    targets = dict.fromkeys((target.code, _DEEPL_GLOSSARY_BASE.get(target.code, target.code)))
    return [(s.lower(), t.lower()) for s in sources for t in targets]


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
