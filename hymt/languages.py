"""The 38 languages the Hunyuan translation models support, and how clients name them.

One table (`LANGUAGES`, in the order of the models' own language table): code, English name
(for English prompt templates), Chinese name (for Chinese ones), the other codes clients send
(legacy and region codes, and apart from them the ISO 639-2/3 codes), other names (English and
Chinese variants, the language's own name) and the Unicode scripts a text in that language is
written in (for detection and for quality checks such as "the answer is in the wrong script").
The script blocks live here too: every module that classifies characters imports them.

Lookup (`get_language`) ignores case, treats `_` as `-`, accepts codes, aliases and names, and
reads BCP-47 tags: region subtags are dropped (`de-AT` -> de) unless they select a Chinese
script (`zh-TW` -> zh-Hant), script subtags pick Simplified or Traditional Chinese
(`zh-Hant-CN` -> zh-Hant, `cmn-Hans` -> zh). It never maps an unsupported base language to a
supported one: `sv`, `no`, `da` raise UnknownLanguageError.
"""
from __future__ import annotations

import bisect
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from hymt.errors import UnknownLanguageError

# Unicode blocks of the scripts in the table; enough to classify letters for detection and
# quality checks. (first code point, last code point, script name), blocks disjoint.
SCRIPT_RANGES: tuple[tuple[int, int, str], ...] = (
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
#: Every script name `char_script` can return.
SCRIPTS = frozenset(script for _, _, script in SCRIPT_RANGES)
#: Scripts written without spaces between words (a character, not a word, is the unit to count).
UNSPACED_SCRIPTS = frozenset({"Han", "Hiragana", "Katakana", "Thai", "Khmer", "Myanmar", "Tibetan"})


@dataclass(frozen=True)
class Language:
    """One supported language.

    Attributes:
        code: HY-MT's own code (`zh`, `zh-Hant`, `yue`, `tl`, ...), the one to show and store.
        english_name: the name English prompt templates use ("German").
        chinese_name: the name Chinese prompt templates use ("德语").
        aliases: other short codes clients send for it: legacy and region codes (`zh-CN`,
            `fil`, `iw`, `pb`).
        scripts: Unicode script names (see SCRIPTS) its text is written in, most common first.
        names: other names clients send: English and Chinese variants ("Farsi", "德文",
            "德語") and the language's name for itself ("Deutsch").
        iso_codes: its ISO 639-2/T, 639-2/B and 639-3 codes (`deu`, `ger`; `cmn` for Chinese);
            zh-Hant has none (ISO 639 does not tell scripts apart), Cantonese's is its code.
    """

    code: str
    english_name: str
    chinese_name: str
    aliases: tuple[str, ...] = ()
    scripts: tuple[str, ...] = ("Latin",)
    names: tuple[str, ...] = ()
    iso_codes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.code or not self.english_name or not self.chinese_name:
            raise ValueError(f"language {self.code!r}: code, english_name and chinese_name are required")
        unknown = set(self.scripts) - SCRIPTS
        if not self.scripts or unknown:
            raise ValueError(f"language {self.code!r}: scripts must be among {sorted(SCRIPTS)}, got {self.scripts}")

    def __str__(self) -> str:
        return self.code


_HAN = ("Han",)
_ARABIC = ("Arabic",)
_CYRILLIC = ("Cyrillic",)

# In the models' table order. Kazakh and Mongolian are also written in Arabic and traditional
# Mongolian script in China (the Mandarin<->minority test sets), so those count as their script too.
LANGUAGES: tuple[Language, ...] = (
    Language("zh", "Chinese", "中文", aliases=("zh-CN", "zh-Hans", "zh-SG", "cn"), scripts=_HAN,
             iso_codes=("zho", "chi", "cmn"),
             names=("Simplified Chinese", "Chinese (Simplified)", "Mandarin", "Mandarin Chinese", "简体中文",
                    "簡體中文", "中文（简体）", "中文（簡體）", "简体", "汉语", "漢語", "华语", "華語",
                    "普通话", "普通話")),
    Language("en", "English", "英语", aliases=("en-US", "en-GB"), iso_codes=("eng",), names=("英文", "英語")),
    Language("fr", "French", "法语", iso_codes=("fra", "fre"), names=("法文", "法語", "Français")),
    Language("pt", "Portuguese", "葡萄牙语", aliases=("pt-BR", "pt-PT", "pb"), iso_codes=("por",),
             names=("Brazilian Portuguese", "葡萄牙文", "葡萄牙語", "Português")),
    Language("es", "Spanish", "西班牙语", iso_codes=("spa",), names=("Castilian", "西班牙文", "西班牙語", "Español")),
    Language("ja", "Japanese", "日语", scripts=("Hiragana", "Katakana", "Han"), iso_codes=("jpn",),
             names=("日文", "日語", "日本语", "日本語")),
    Language("tr", "Turkish", "土耳其语", iso_codes=("tur",), names=("土耳其文", "土耳其語", "Türkçe")),
    Language("ru", "Russian", "俄语", scripts=_CYRILLIC, iso_codes=("rus",), names=("俄文", "俄語", "Русский")),
    Language("ar", "Arabic", "阿拉伯语", scripts=_ARABIC, iso_codes=("ara", "arb"),
             names=("阿拉伯文", "阿拉伯語", "العربية")),
    Language("ko", "Korean", "韩语", scripts=("Hangul",), iso_codes=("kor",),
             names=("韩文", "韓文", "韓語", "韩国语", "韓國語", "朝鲜语", "朝鮮語", "한국어")),
    Language("th", "Thai", "泰语", scripts=("Thai",), iso_codes=("tha",), names=("泰文", "泰語", "ไทย", "ภาษาไทย")),
    Language("it", "Italian", "意大利语", iso_codes=("ita",),
             names=("意大利文", "意大利語", "義大利語", "義大利文", "Italiano")),
    Language("de", "German", "德语", iso_codes=("deu", "ger"), names=("德文", "德語", "Deutsch")),
    Language("vi", "Vietnamese", "越南语", iso_codes=("vie",), names=("越南文", "越南語", "Tiếng Việt")),
    Language("ms", "Malay", "马来语", iso_codes=("msa", "may", "zsm"),
             names=("Malaysian", "马来文", "馬來語", "馬來文", "Bahasa Melayu", "Melayu")),
    Language("id", "Indonesian", "印尼语", aliases=("in",), iso_codes=("ind",),
             names=("印度尼西亚语", "印度尼西亞語", "印尼文", "印尼語", "Bahasa Indonesia")),
    Language("tl", "Filipino", "菲律宾语", aliases=("fil",), iso_codes=("tgl",),
             names=("Tagalog", "Pilipino", "他加禄语", "他加祿語", "菲律賓語")),
    Language("hi", "Hindi", "印地语", scripts=("Devanagari",), iso_codes=("hin",),
             names=("印地文", "印地語", "हिन्दी", "हिंदी")),
    Language("zh-Hant", "Traditional Chinese", "繁体中文", aliases=("zh-TW", "zh-HK", "zh-MO", "zt", "zh-TR"),
             scripts=_HAN,
             names=("Chinese (Traditional)", "繁體中文", "中文（繁體）", "中文（繁体）", "繁体", "繁體", "正體中文",
                    "正体中文")),
    Language("pl", "Polish", "波兰语", iso_codes=("pol",), names=("波兰文", "波蘭語", "波蘭文", "Polski")),
    Language("cs", "Czech", "捷克语", iso_codes=("ces", "cze"), names=("捷克文", "捷克語", "Čeština")),
    Language("nl", "Dutch", "荷兰语", iso_codes=("nld", "dut"),
             names=("Flemish", "荷兰文", "荷蘭語", "荷蘭文", "Nederlands")),
    Language("km", "Khmer", "高棉语", scripts=("Khmer",), iso_codes=("khm",),
             names=("Cambodian", "柬埔寨语", "柬埔寨語", "高棉文", "高棉語", "ភាសាខ្មែរ")),
    Language("my", "Burmese", "缅甸语", scripts=("Myanmar",), iso_codes=("mya", "bur"),
             names=("Myanmar", "缅甸文", "緬甸語", "緬甸文", "မြန်မာဘာသာ")),
    Language("fa", "Persian", "波斯语", scripts=_ARABIC, iso_codes=("fas", "per", "pes"),
             names=("Farsi", "波斯文", "波斯語", "فارسی")),
    Language("gu", "Gujarati", "古吉拉特语", scripts=("Gujarati",), iso_codes=("guj",),
             names=("古吉拉特文", "古吉拉特語", "ગુજરાતી")),
    Language("ur", "Urdu", "乌尔都语", scripts=_ARABIC, iso_codes=("urd",), names=("乌尔都文", "烏爾都語", "اردو")),
    Language("te", "Telugu", "泰卢固语", scripts=("Telugu",), iso_codes=("tel",),
             names=("泰卢固文", "泰盧固語", "తెలుగు")),
    Language("mr", "Marathi", "马拉地语", scripts=("Devanagari",), iso_codes=("mar",),
             names=("马拉地文", "馬拉地語", "मराठी")),
    Language("he", "Hebrew", "希伯来语", aliases=("iw",), scripts=("Hebrew",), iso_codes=("heb",),
             names=("希伯来文", "希伯來語", "希伯來文", "עברית")),
    Language("bn", "Bengali", "孟加拉语", scripts=("Bengali",), iso_codes=("ben",),
             names=("Bangla", "孟加拉文", "孟加拉語", "বাংলা")),
    Language("ta", "Tamil", "泰米尔语", scripts=("Tamil",), iso_codes=("tam",), names=("泰米尔文", "泰米爾語", "தமிழ்")),
    Language("uk", "Ukrainian", "乌克兰语", scripts=_CYRILLIC, iso_codes=("ukr",),
             names=("乌克兰文", "烏克蘭語", "烏克蘭文", "Українська")),
    Language("bo", "Tibetan", "藏语", scripts=("Tibetan",), iso_codes=("bod", "tib"), names=("藏文", "藏語", "བོད་ཡིག")),
    Language("kk", "Kazakh", "哈萨克语", scripts=("Cyrillic", "Arabic"), iso_codes=("kaz",),
             names=("Kazak", "哈萨克文", "哈薩克語", "Қазақ тілі", "Қазақша")),
    Language("mn", "Mongolian", "蒙古语", aliases=("mn-Cyrl",), scripts=("Cyrillic", "Mongolian"),
             iso_codes=("mon", "khk"), names=("蒙古文", "蒙古語", "Монгол хэл")),
    Language("ug", "Uyghur", "维吾尔语", scripts=_ARABIC, iso_codes=("uig",),
             names=("Uighur", "Uygur", "维吾尔文", "維吾爾語", "ئۇيغۇرچە")),
    Language("yue", "Cantonese", "粤语", aliases=("zh-yue",), scripts=_HAN, names=("粵語", "广东话", "廣東話")),
)

#: Codes whose prompts use the Chinese template (Traditional Chinese and Cantonese count as Chinese).
CHINESE_CODES = frozenset({"zh", "zh-Hant", "yue"})
# Region subtags that, without a script subtag, mean Traditional characters.
_TRADITIONAL_REGIONS = frozenset({"tw", "hk", "mo"})
_PARENTHESES = re.compile(r"[()]")
_SPACES = re.compile(r"\s+")


def _key(name: str) -> str:
    """The lookup form of a code or name: NFKC (full-width brackets), no case, `_` as `-`, no brackets."""
    folded = unicodedata.normalize("NFKC", name).casefold().replace("_", "-")
    return _SPACES.sub(" ", _PARENTHESES.sub(" ", folded)).strip()


def _build_index() -> dict[str, Language]:
    index: dict[str, Language] = {}
    for lang in LANGUAGES:
        for name in (lang.code, lang.english_name, lang.chinese_name, *lang.aliases, *lang.iso_codes, *lang.names):
            key = _key(name)
            if key in index and index[key] is not lang:  # a table typo, caught at import
                raise AssertionError(f"language key {name!r} is used twice")
            index[key] = lang
    return index


_INDEX = _build_index()
_BY_CODE = {lang.code: lang for lang in LANGUAGES}


def supported_codes() -> tuple[str, ...]:
    """HY-MT's own codes, in table order."""
    return tuple(lang.code for lang in LANGUAGES)


def get_language(code_or_name: str | Language, field: str = "language") -> Language:
    """The Language a client code, alias, name or BCP-47 tag stands for.

    The whole key first (aliases such as `zh-TW`, `zh-TR`, names such as "Simplified Chinese"),
    then the tag read as BCP-47: language (or extended language, `zh-yue`), then an optional
    script and region that only matter for Chinese (`zh-Hant-CN` -> zh-Hant, `zh-Hans-TW` -> zh,
    `zh-HK` -> zh-Hant); any other subtag is dropped (`de-AT`, `en_US`, `es-419` -> base).

    Raises:
        UnknownLanguageError: not one of the 38; the message lists the valid codes and the
            error's `field` is `field` (e.g. "target", "source").
    """
    if isinstance(code_or_name, Language):
        return code_or_name
    if not isinstance(code_or_name, str) or not code_or_name.strip():
        raise _unknown(code_or_name, field)
    key = _key(code_or_name)
    if key in _INDEX:
        return _INDEX[key]
    lang = _from_tag(key)
    if lang is None:
        raise _unknown(code_or_name, field)
    return lang


def _from_tag(key: str) -> Language | None:
    """A BCP-47 tag's language; None when its language subtag is not ours (or it is not a tag)."""
    if " " in key:
        return None
    primary, *rest = key.split("-")
    if rest and len(rest[0]) == 3 and rest[0].isalpha() and rest[0] in _INDEX:
        primary, rest = rest[0], rest[1:]  # extended language subtag: zh-yue, zh-cmn
    lang = _INDEX.get(primary)
    if lang is None or lang.code != "zh":
        return lang
    script = rest[0] if rest and len(rest[0]) == 4 and rest[0].isalpha() else None
    if script == "hant" or (script is None and rest and rest[0] in _TRADITIONAL_REGIONS):
        return _BY_CODE["zh-Hant"]
    return lang


def _unknown(value: object, field: str) -> UnknownLanguageError:
    return UnknownLanguageError(
        f"unsupported {field} language {value!r}; supported codes: {', '.join(supported_codes())}",
        field=field,
    )


def is_chinese(lang: Language | str) -> bool:
    """True for Chinese, Traditional Chinese and Cantonese: they select the Chinese template."""
    return get_language(lang).code in CHINESE_CODES


_SORTED_RANGES = sorted(SCRIPT_RANGES)
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


def script_char_class(scripts: Iterable[str]) -> str:
    """The body of a regex character class matching the letters of `scripts` (as `char_script`
    classifies them), e.g. `re.compile(f"[{script_char_class(UNSPACED_SCRIPTS)}]")`.

    Raises:
        ValueError: a name that is not in SCRIPTS.
    """
    wanted = set(scripts)
    if not wanted <= SCRIPTS:
        raise ValueError(f"unknown scripts {sorted(wanted - SCRIPTS)}; known: {sorted(SCRIPTS)}")
    return "".join(f"{re.escape(chr(low))}-{re.escape(chr(high))}" for low, high, script in _SORTED_RANGES
                   if script in wanted)


def script_counts(text: str) -> Counter[str]:
    """Letters per script (characters outside the known scripts are not counted).

    Vectorised over the text (the quality guard and the detector call it on every answer and
    source): the same blocks as char_script."""
    if not text:
        return Counter()
    points = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.int64)  # [chars]
    block = np.searchsorted(_STARTS, points, side="right") - 1  # [chars]
    inside = (block >= 0) & (points <= _ENDS[np.maximum(block, 0)])
    ids, counts = np.unique(block[inside], return_counts=True)
    out: Counter[str] = Counter()
    for i, n in zip(ids.tolist(), counts.tolist(), strict=True):
        out[_SORTED_RANGES[i][2]] += n  # several blocks share a script
    return out
