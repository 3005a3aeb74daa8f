"""What a segment that is right to keep exactly as it is looks like: code, a command, a URL,
an address, a name or a product, a number.

The quality guard asks these when an answer repeats its source. Each test looks at the form of
the text only (no language model), so each is narrow: a test that says "yes" to a sentence
would let untranslated sentences through.
"""
from __future__ import annotations

import re

#: More words than this and a capitalised text is a heading or a sentence, not a name.
MAX_NAME_WORDS = 10
#: More words than this and a text with a code token is prose that mentions code.
MAX_CODE_WORDS = 12
#: More words than this and an all-lowercase text is not a command line.
MAX_COMMAND_WORDS = 6
#: More characters than this and a Han-only text is a sentence, not a name ("北京大学").
MAX_HAN_NAME_CHARS = 8
#: Share of ASCII characters below which a text is not code (a Chinese sentence with a URL).
MIN_CODE_ASCII_SHARE = 0.8

# A token that only code, paths, addresses or identifiers contain.
_CODE_TOKEN = re.compile(
    r"""
      [A-Za-z][A-Za-z0-9+.-]*://\S+          # URL
    | [\w.+-]+@[\w-]+(?:\.[\w-]+)+           # e-mail address
    | (?<!\S)--?[A-Za-z][\w-]*               # command-line option
    | (?<!\S)[~.]?/\w\S* | \w[\w.-]*[/\\]\w   # path
    | \w+_\w+                                # snake_case identifier
    | \w\(                                   # a call: print(
    | [{}\[\]<>=;$|`#]                       # punctuation prose does not use
    | (?<!\S)[\w-]+\.[a-z]{2,4}(?!\w)        # file.ext, example.com
    """,
    re.VERBOSE,
)
_COMMAND = re.compile(r"[a-z][a-z0-9._-]*(?: [a-z0-9][a-z0-9._-]*)*")
# Words that join the capitalised words of a name or an address ("Bank of America",
# "Ludwig van Beethoven", "Universidad Nacional Autónoma de México").
_CONNECTORS = frozenset(
    "of the and & for at on de del della di da do dos das la le les los el al van von der den du y e et und bin".split()
)
_SENTENCE_END = re.compile(r"[.!?。！？…]['\")\]」』”’]*\s*$")
# Abbreviations that end names and addresses, not sentences ("Apple Inc.", "Abbey Rd.").
_ABBREVIATION_END = re.compile(r"(?:^|\s)(?:Inc|Ltd|Co|Corp|Jr|Sr|St|Ave|Rd|Vol|No|Bros)\.\s*$")
_EDGE_PUNCTUATION = "\"'“”‘’«»()[]{}<>,;:!?¡¿.。、，"
_HAN = re.compile(r"[\u3400-\u4DBF\u4E00-\u9FFF\uF900-\uFAFF]+")


def has_letters(text: str) -> bool:
    """False for numbers, dates, phone numbers and symbols."""
    return any(ch.isalpha() for ch in text)


def is_sentence(text: str) -> bool:
    """Ends like a sentence (a full stop that is not an abbreviation's, "!", "?", "。")."""
    return bool(_SENTENCE_END.search(text)) and not _ABBREVIATION_END.search(text)


def looks_like_code(text: str) -> bool:
    """A URL, e-mail address, path, command line, query or call: mostly ASCII, not a sentence,
    short, and holding a token that prose does not use."""
    words = text.split()
    if not words or len(words) > MAX_CODE_WORDS:
        return False
    if len(text.encode("ascii", "ignore")) < MIN_CODE_ASCII_SHARE * len(text.encode("utf-8")):
        return False
    return bool(_CODE_TOKEN.search(text)) and not (is_sentence(text) and text.rstrip()[-1] == ".")


def looks_like_command(text: str) -> bool:
    """A short command line of lowercase ASCII words ("pip install hymt", "npm run build").

    A lowercase phrase of the same form ("see you tomorrow") passes too, so the guard asks this
    only after the language detector found no language in the text."""
    words = text.split()
    return 0 < len(words) <= MAX_COMMAND_WORDS and bool(_COMMAND.fullmatch(" ".join(words)))


def looks_like_name(text: str, *, han_target: bool = False) -> bool:
    """A name, product, title or address: every word capitalised, holding a digit or a
    connector ("of", "van", "de"), at most MAX_NAME_WORDS words, not a sentence.

    `han_target`: the target language is written in Han, so a short Han-only text with no
    punctuation ("北京大学") is a name it keeps as well."""
    if han_target and len(text) <= MAX_HAN_NAME_CHARS and _HAN.fullmatch(text.strip()):
        return True
    words = [w.strip(_EDGE_PUNCTUATION) for w in text.split()]
    words = [w for w in words if w]
    if not words or len(words) > MAX_NAME_WORDS or is_sentence(text):
        return False
    cased = 0
    for word in words:
        if any(ch.isdigit() for ch in word) or word.casefold() in _CONNECTORS:
            continue
        if not any(ch.isupper() for ch in word):
            return False
        cased += 1
    return cased > 0
