"""The 38 languages the Hunyuan translation models support, and how clients name them.

One table (`LANGUAGES`, docs/reference/models.md §9 order): code, English name (for English prompt
templates), Chinese name (for Chinese ones), the codes clients send instead of ours
(docs/reference/protocols.md §4) and the Unicode scripts a text in that language is written in (for
quality checks such as "the answer is in the wrong script").

Lookup (`get_language`) is case-insensitive, treats `_` as `-`, accepts codes, aliases and
English or Chinese names, and drops region subtags (`de-AT` -> `de`). It never maps an
unsupported base language to a supported one: `sv`, `no`, `da` raise UnknownLanguageError.
"""
from __future__ import annotations

import bisect
from collections import Counter
from dataclasses import dataclass

import numpy as np

from hymt.errors import UnknownLanguageError


@dataclass(frozen=True)
class Language:
    """One supported language.

    Attributes:
        code: HY-MT's own code (`zh`, `zh-Hant`, `yue`, `tl`, ...), the one to show and store.
        english_name: the name English prompt templates use ("German").
        chinese_name: the name Chinese prompt templates use ("德语").
        aliases: other codes clients send for it (`zh-CN`, `fil`, `iw`, ...).
        scripts: Unicode script names its text is normally written in, most common first.
    """

    code: str
    english_name: str
    chinese_name: str
    aliases: tuple[str, ...] = ()
    scripts: tuple[str, ...] = ("Latin",)

    def __str__(self) -> str:
        return self.code


_HAN = ("Han",)
_ARABIC = ("Arabic",)
_CYRILLIC = ("Cyrillic",)

# docs/reference/models.md §9, in table order. Kazakh and Mongolian are also written in Arabic and traditional
# Mongolian script in China (the Mandarin<->minority test sets), so those count as their script too.
LANGUAGES: tuple[Language, ...] = (
    Language("zh", "Chinese", "中文", ("zh-CN", "zh-Hans", "zh-SG", "cn"), _HAN),
    Language("en", "English", "英语", ("en-US", "en-GB")),
    Language("fr", "French", "法语"),
    Language("pt", "Portuguese", "葡萄牙语", ("pt-BR", "pt-PT", "pb")),
    Language("es", "Spanish", "西班牙语"),
    Language("ja", "Japanese", "日语", (), ("Hiragana", "Katakana", "Han")),
    Language("tr", "Turkish", "土耳其语"),
    Language("ru", "Russian", "俄语", (), _CYRILLIC),
    Language("ar", "Arabic", "阿拉伯语", (), _ARABIC),
    Language("ko", "Korean", "韩语", (), ("Hangul",)),
    Language("th", "Thai", "泰语", (), ("Thai",)),
    Language("it", "Italian", "意大利语"),
    Language("de", "German", "德语"),
    Language("vi", "Vietnamese", "越南语"),
    Language("ms", "Malay", "马来语"),
    Language("id", "Indonesian", "印尼语", ("in",)),
    Language("tl", "Filipino", "菲律宾语", ("fil",)),
    Language("hi", "Hindi", "印地语", (), ("Devanagari",)),
    Language(
        "zh-Hant", "Traditional Chinese", "繁体中文", ("zh-TW", "zh-HK", "zh-MO", "zt", "zh-TR"), _HAN
    ),
    Language("pl", "Polish", "波兰语"),
    Language("cs", "Czech", "捷克语"),
    Language("nl", "Dutch", "荷兰语"),
    Language("km", "Khmer", "高棉语", (), ("Khmer",)),
    Language("my", "Burmese", "缅甸语", (), ("Myanmar",)),
    Language("fa", "Persian", "波斯语", (), _ARABIC),
    Language("gu", "Gujarati", "古吉拉特语", (), ("Gujarati",)),
    Language("ur", "Urdu", "乌尔都语", (), _ARABIC),
    Language("te", "Telugu", "泰卢固语", (), ("Telugu",)),
    Language("mr", "Marathi", "马拉地语", (), ("Devanagari",)),
    Language("he", "Hebrew", "希伯来语", ("iw",), ("Hebrew",)),
    Language("bn", "Bengali", "孟加拉语", (), ("Bengali",)),
    Language("ta", "Tamil", "泰米尔语", (), ("Tamil",)),
    Language("uk", "Ukrainian", "乌克兰语", (), _CYRILLIC),
    Language("bo", "Tibetan", "藏语", (), ("Tibetan",)),
    Language("kk", "Kazakh", "哈萨克语", (), ("Cyrillic", "Arabic")),
    Language("mn", "Mongolian", "蒙古语", ("mn-Cyrl",), ("Cyrillic", "Mongolian")),
    Language("ug", "Uyghur", "维吾尔语", (), _ARABIC),
    Language("yue", "Cantonese", "粤语", ("zh-yue",), _HAN),
)

#: Codes whose prompts use the Chinese template (docs/reference/models.md §7: treat zh-Hant and yue as ZH).
CHINESE_CODES = frozenset({"zh", "zh-Hant", "yue"})


def _key(name: str) -> str:
    return name.strip().casefold().replace("_", "-")


def _build_index() -> dict[str, Language]:
    index: dict[str, Language] = {}
    for lang in LANGUAGES:
        for name in (lang.code, lang.english_name, lang.chinese_name, *lang.aliases):
            key = _key(name)
            if key in index and index[key] is not lang:  # a table typo, caught at import
                raise AssertionError(f"language key {name!r} is used twice")
            index[key] = lang
    return index


_INDEX = _build_index()


def supported_codes() -> tuple[str, ...]:
    """HY-MT's own codes, in table order."""
    return tuple(lang.code for lang in LANGUAGES)


def get_language(code_or_name: str | Language, field: str = "language") -> Language:
    """The Language a client code, alias or name stands for.

    Tries the whole key first (so `zh-TW` and `zh-Hant-TW` keep their script), then drops
    trailing subtags one at a time (`de-AT` -> `de`, `zh-Hans-CN` -> `zh-Hans` -> zh).

    Raises:
        UnknownLanguageError: not one of the 38; the message lists the valid codes and the
            error's `field` is `field` (e.g. "target", "source").
    """
    if isinstance(code_or_name, Language):
        return code_or_name
    if not isinstance(code_or_name, str) or not code_or_name.strip():
        raise _unknown(code_or_name, field)
    key = _key(code_or_name)
    while True:
        if key in _INDEX:
            return _INDEX[key]
        if "-" not in key:
            raise _unknown(code_or_name, field)
        key = key.rsplit("-", 1)[0]


def _unknown(value: object, field: str) -> UnknownLanguageError:
    return UnknownLanguageError(
        f"unsupported {field} language {value!r}; supported codes: {', '.join(supported_codes())}",
        field=field,
    )


def is_chinese(lang: Language | str) -> bool:
    """True for Chinese, Traditional Chinese and Cantonese: they select the Chinese template."""
    return get_language(lang).code in CHINESE_CODES


# Unicode blocks of the scripts in the table; enough to classify letters for quality checks.
_SCRIPT_RANGES: tuple[tuple[int, int, str], ...] = (
    (0x0041, 0x005A, "Latin"), (0x0061, 0x007A, "Latin"), (0x00C0, 0x024F, "Latin"),
    (0x1E00, 0x1EFF, "Latin"),
    (0x0400, 0x052F, "Cyrillic"),
    (0x0590, 0x05FF, "Hebrew"),
    (0x0600, 0x06FF, "Arabic"), (0x0750, 0x077F, "Arabic"), (0x08A0, 0x08FF, "Arabic"),
    (0xFB50, 0xFDFF, "Arabic"), (0xFE70, 0xFEFF, "Arabic"),
    (0x0900, 0x097F, "Devanagari"), (0x0980, 0x09FF, "Bengali"), (0x0A80, 0x0AFF, "Gujarati"),
    (0x0B80, 0x0BFF, "Tamil"), (0x0C00, 0x0C7F, "Telugu"), (0x0E00, 0x0E7F, "Thai"),
    (0x0F00, 0x0FFF, "Tibetan"), (0x1000, 0x109F, "Myanmar"), (0x1100, 0x11FF, "Hangul"),
    (0x1780, 0x17FF, "Khmer"), (0x19E0, 0x19FF, "Khmer"), (0x1800, 0x18AF, "Mongolian"),
    (0x3040, 0x309F, "Hiragana"), (0x30A0, 0x30FF, "Katakana"), (0x31F0, 0x31FF, "Katakana"),
    (0x3130, 0x318F, "Hangul"), (0xAC00, 0xD7AF, "Hangul"),
    (0x3400, 0x4DBF, "Han"), (0x4E00, 0x9FFF, "Han"), (0xF900, 0xFAFF, "Han"),
    (0x20000, 0x2FA1F, "Han"),
)


_SORTED_RANGES = sorted(_SCRIPT_RANGES)
_RANGE_STARTS = [low for low, _, _ in _SORTED_RANGES]
_STARTS = np.array(_RANGE_STARTS, dtype=np.int64)  # [blocks]
_ENDS = np.array([high for _, high, _ in _SORTED_RANGES], dtype=np.int64)  # [blocks]


def char_script(ch: str) -> str | None:
    """The script of one character among those in the table, or None (digits, punctuation, ...).

    A binary search over the (disjoint) blocks: the quality guard calls this for every
    character of every answer."""
    point = ord(ch)
    i = bisect.bisect_right(_RANGE_STARTS, point) - 1
    if i >= 0:
        low, high, script = _SORTED_RANGES[i]
        if point <= high:
            return script
    return None


def script_counts(text: str) -> Counter:
    """Letters per script (characters outside the known scripts are not counted).

    Vectorised over the text (the quality guard and the detector call it on every answer and
    source): the same blocks as char_script."""
    if not text:
        return Counter()
    points = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.int64)  # [chars]
    block = np.searchsorted(_STARTS, points, side="right") - 1  # [chars]
    inside = (block >= 0) & (points <= _ENDS[np.maximum(block, 0)])
    ids, counts = np.unique(block[inside], return_counts=True)
    out: Counter = Counter()
    for i, n in zip(ids.tolist(), counts.tolist()):
        out[_SORTED_RANGES[i][2]] += n  # several blocks share a script
    return out
