"""The prompt guard for OpenAI chat requests (docs/reference/protocols.md §2.1).

Translation clients send their own prompts: a system message ("You are a professional
translation engine...") and/or "Translate the following text into {lang}: ...", often with
several paragraphs joined by blank lines or Immersive's `%%`. HY-MT answers such prompts in
Chinese or drops lines. The guard sorts a chat into three kinds:

- "official": the user turn is one of the official HY-MT prompt templates -> sent untouched.
- "generic": a generic translation instruction with a recognisable target language -> the
  text is cut out, split into paragraphs, each translated with the family's official
  template as its own engine request, and the answers re-joined with the original separators.
- "chat": anything else -> rendered as a chat and sent to the engine as it is.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from hymt.families import templates as official
from hymt.languages import LANGUAGES, Language, get_language

# Placeholders of the official texts; everything else in them is literal.
_PLACEHOLDER = re.compile(
    r"\{(?:target_language|source_text|target_lang|context|src_text_with_format|target_style|format_type|"
    r"background_text|source_term|target_term|n|user_preferences)\}|<(?:target_language|source_text|"
    r"source_language|n|translated_text)>"
)
# Multi-part templates: a prompt that starts with the head is official.
_HEADS = ("HYMT15_TERMS_HEAD", "MT2_TERMS_HEAD_ZH", "MT2_TERMS_HEAD_EN", "MT2_PERSONAL_HEAD_ZH",
          "MT2_PERSONAL_HEAD_EN", "FUSION_HEAD")
_PARTS = ("_LINE", "_TAIL", "_LAST")

_LABELS_BEFORE = re.compile(r"^\s*(?:source\s*text|original\s*text|text|input|原文|待翻译文本)\s*[:：]\s*", re.I)
_LABELS_AFTER = re.compile(r"\n\s*(?:translated\s*text|translation|output|译文|翻译结果)\s*[:：]\s*$", re.I)
# Paragraph separators: a `%%` line (Immersive) or one or more blank lines.
_SEPARATOR = re.compile(r"[ \t]*\n\s*%%\s*\n\s*|[ \t]*\n[ \t]*(?:\n[ \t]*)+")


@dataclass(frozen=True)
class GuardPlan:
    """What the guard decided.

    Attributes:
        kind: "official", "generic" or "chat".
        target / source: the languages of a generic instruction (source None = detect).
        paragraphs: the texts to translate, in order (generic only).
        separators: the exact text after each paragraph (same length as paragraphs).
    """

    kind: str
    target: Language | None = None
    source: Language | None = None
    paragraphs: tuple[str, ...] = ()
    separators: tuple[str, ...] = ()

    def join(self, translations: list[str]) -> str:
        return "".join(t + s for t, s in zip(translations, self.separators))


def plan(messages: list[dict[str, str]]) -> GuardPlan:
    """Classify a chat (messages with plain-text content)."""
    users = [m for m in messages if m["role"] == "user"]
    others = [m for m in messages if m["role"] not in ("user", "system", "developer")]
    if not users:
        return GuardPlan("chat")
    last = users[-1]["content"]
    if is_official(last):
        return GuardPlan("official")
    if others or len(users) != 1:
        return GuardPlan("chat")
    system = "\n".join(m["content"] for m in messages if m["role"] in ("system", "developer"))
    found = find_instruction(last)
    if found is not None:
        target, source, span = found
        text = _text_around(last, span)
    else:
        found = find_instruction(system)
        if found is None:
            return GuardPlan("chat")
        target, source, _ = found
        text = _strip_labels(last)
    if not text.strip():
        return GuardPlan("chat")
    paragraphs, separators = split_paragraphs(text)
    return GuardPlan("generic", target, source, tuple(paragraphs), tuple(separators))


@functools.lru_cache(maxsize=1)
def _official_patterns() -> tuple[tuple[re.Pattern, ...], tuple[str, ...]]:
    full, heads = [], []
    for name in dir(official):
        value = getattr(official, name)
        if not name.isupper() or not isinstance(value, str):
            continue
        if name in _HEADS:
            heads.append(_PLACEHOLDER.split(value)[0])
        elif not any(part in name for part in _PARTS):
            pieces = [re.escape(p) for p in _PLACEHOLDER.split(value)]
            full.append(re.compile("^" + r"[\s\S]+?".join(pieces) + "$"))
    return tuple(full), tuple(h for h in heads if h)


def is_official(text: str) -> bool:
    """True when `text` is an official HY-MT prompt (any generation's template)."""
    full, heads = _official_patterns()
    return any(text.startswith(h) for h in heads) or any(p.match(text) for p in full)


@functools.lru_cache(maxsize=1)
def _language_patterns() -> tuple[re.Pattern, re.Pattern, dict[str, str]]:
    names: dict[str, str] = {}
    for lang in LANGUAGES:  # the one language table: names and their variants, English and Chinese
        for name in (lang.english_name, lang.chinese_name, *lang.names):
            names[name if _is_cjk(name) else name.lower()] = lang.code
    english = sorted((n for n in names if not _is_cjk(n)), key=len, reverse=True)
    chinese = sorted((n for n in names if _is_cjk(n)), key=len, reverse=True)
    name_en = "|".join(re.escape(n) for n in english)
    en = re.compile(
        r"\btranslat\w*\b(?P<between>[^\n]{0,120}?)\b(?:into|to)\s+(?:the\s+)?[\"'“]?(?P<target>" + name_en + r")\b",
        re.I,
    )
    zh = re.compile(r"(?:翻译|译)(?:成|为|到)\s*[「“\"']?(?P<target>" + "|".join(map(re.escape, chinese)) + ")")
    return en, zh, names


def _is_cjk(name: str) -> bool:
    """Names written in Chinese characters go to the Chinese instruction pattern."""
    return any("\u3400" <= ch <= "\u9fff" for ch in name)


def find_instruction(text: str) -> tuple[Language, Language | None, tuple[int, int]] | None:
    """(target, source or None, span of the instruction) of a translation request in `text`."""
    en, zh, names = _language_patterns()
    match = en.search(text) or zh.search(text)
    if match is None:
        return None
    name = match.group("target")
    target = get_language(names[name if _is_cjk(name) else name.lower()])
    source = None
    between = match.groupdict().get("between") or ""
    src = re.search(r"\bfrom\s+(?:the\s+)?(?P<name>[A-Za-z][A-Za-z ()]*?)\s*$", between, re.I)
    if src and src.group("name").lower() in names:
        source = get_language(names[src.group("name").lower()])
    end = match.end()
    return target, source, (match.start(), end)


def _text_around(message: str, span: tuple[int, int]) -> str:
    """The text an instruction inside `message` refers to."""
    fenced = re.search(r"```[^\n]*\n([\s\S]*?)\n?```", message) or re.search(r'"""\n?([\s\S]*?)\n?"""', message)
    if fenced:
        return fenced.group(1)
    tagged = re.search(r"<(text|source|input)>([\s\S]*?)</\1>", message)
    if tagged:
        return tagged.group(2)
    start, end = span
    rest = message[end:]
    # The instruction sentence ends at the first colon or line break after the language.
    cut = re.search(r"[:：]|\n", rest)
    after = rest[cut.end():] if cut else ""
    after = _strip_labels(after)
    if after.strip():
        return after.strip()
    before = message[:start]
    return _strip_labels(before).strip()


def _strip_labels(text: str) -> str:
    text = _LABELS_AFTER.sub("", text)
    # A trailing instruction tail line such as "Output translation directly..." is not text.
    text = re.sub(r"^\s*(?:output|only output|do not|don't)[^\n]*\n", "", text, flags=re.I)
    text = _LABELS_BEFORE.sub("", text, count=1)
    stripped = text.strip()
    if len(stripped) >= 2 and stripped[0] == stripped[-1] and stripped[0] in "\"'“”":
        return stripped[1:-1]
    return text.strip("\n")


def split_paragraphs(text: str) -> tuple[list[str], list[str]]:
    """Paragraphs and the exact separator after each ("" after the last, plus trailing space)."""
    paragraphs, separators, pos = [], [], 0
    for match in _SEPARATOR.finditer(text):
        paragraphs.append(text[pos:match.start()])
        separators.append(match.group(0))
        pos = match.end()
    paragraphs.append(text[pos:])
    separators.append("")
    return paragraphs, separators
