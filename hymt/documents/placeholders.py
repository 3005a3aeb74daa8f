"""Placeholders inside translatable strings, found so that they reach the output byte for byte.

The policy, for every format: a placeholder becomes a void tag `<sN/>` in the unit's text
(a pair `<sN>…</sN>` where it wraps text: an HTML-ish element, an ICU plural branch), and
render writes the original characters back. The model never sees, and so cannot alter,
`%1$s` or `{count}`; the pipeline already refuses an answer that drops or repeats a tag.

Recognised (each a `Syntax` flag, so a format can turn families off):
- printf: `%s`, `%d`, `%5.2f`, `%1$s`, `%%`, Python's `%(name)s` (no space flag: "50% done"
  stays text), Ruby's `%{name}` and `%<name>s`;
- braces: `{0}`, `{name}`, `{}`, `{name:fmt}`, `{n, number}` (one balanced brace group);
- double braces `{{var}}` (Angular, Handlebars, Jinja, i18next); `${var}` (JS templates,
  shells) and i18next's nesting `$t(key)`;
- ICU MessageFormat: `{count, plural, one {# file} other {# files}}` (also select and
  selectordinal): the syntax is markup, only the branch messages are text, `#` is a
  placeholder, branches nest;
- HTML-ish tags `<b>…</b>` (paired when closed in the same message, void otherwise), `<br/>`;
- always: URLs (`https://…`), and text that itself looks like a numbered tag (`<s1>`), so it
  cannot be confused with one.

There is no Python ICU MessageFormat parser that is both well kept and keeps the source text
exact, so the brace syntax is scanned here (balanced braces; ICU's apostrophe quoting is not
interpreted: a quoted brace counts as a brace).
"""
from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from hymt.documents.inline_tags import TAG_PATTERN


class Syntax(enum.Flag):
    PRINTF = enum.auto()
    BRACES = enum.auto()
    DOUBLE_BRACES = enum.auto()
    DOLLAR_BRACES = enum.auto()
    ICU = enum.auto()
    HTML = enum.auto()


#: Strings of localisation files (PO, XLIFF, JSON, YAML): every syntax.
I18N = Syntax.PRINTF | Syntax.BRACES | Syntax.DOUBLE_BRACES | Syntax.DOLLAR_BRACES | Syntax.ICU | Syntax.HTML
#: Prose documents (DOCX, PPTX, XLSX, PDF): the same without ICU (a brace group stays one
#: placeholder; plural syntax in prose is a code sample, not a message).
PROSE = I18N & ~Syntax.ICU


@dataclass(frozen=True)
class Placeholder:
    """Characters kept exactly: a void tag."""

    literal: str


@dataclass(frozen=True)
class Wrapper:
    """Markup around translatable text kept exactly: a paired tag. `syntax_only` marks an ICU
    argument, inside which only its branches may hold text."""

    open: str
    close: str
    children: tuple[Piece, ...]
    syntax_only: bool = False


Piece = str | Placeholder | Wrapper

_PRINTF = (r"%\{[\w.-]+\}|%<[\w.-]+>[-+#0]*[0-9]*(?:\.[0-9]+)?[a-zA-Z]"
           r"|%(?:\([A-Za-z_][\w.-]*\)|[1-9][0-9]*\$)?[-+#0]*(?:[0-9]+|\*)?(?:\.(?:[0-9]+|\*))?"
           r"(?:hh|h|ll|l|L|q|j|z|t|I64|I32)?[diouxXeEfFgGaAcsSpnr%@]")
_PATTERNS: tuple[tuple[Syntax | None, str], ...] = (
    (None, TAG_PATTERN.pattern),
    (None, r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s<>\"']*[^\s<>\"'.,;:!?)]"),
    (Syntax.HTML, r"</?[A-Za-z][\w:.-]*(?:\s+[^<>]*?)?\s*/?>"),
    (Syntax.DOUBLE_BRACES, r"\{\{[^{}]*\}\}"),
    (Syntax.DOLLAR_BRACES, r"\$\{[^{}]*\}|\$t\([^()]*\)"),
    (Syntax.BRACES, r"\{"),
    (Syntax.PRINTF, _PRINTF),
)
_ICU_HEAD = re.compile(r"\{\s*[\w.-]+\s*,\s*(?:plural|selectordinal|select)\s*,(?:\s*offset:\s*\d+)?")
_ICU_BRANCH = re.compile(r"\s*(?:=\s*-?\d+(?:\.\d+)?|[\w-]+)\s*\{")
_HTML_NAME = re.compile(r"</?([A-Za-z][\w:.-]*)")
_compiled: dict[Syntax, re.Pattern[str]] = {}


def _pattern(syntaxes: Syntax) -> re.Pattern[str]:
    if syntaxes not in _compiled:
        parts = [p for flag, p in _PATTERNS if flag is None or (flag & syntaxes)]
        _compiled[syntaxes] = re.compile("|".join(f"(?:{p})" for p in parts))
    return _compiled[syntaxes]


def scan(text: str, syntaxes: Syntax) -> tuple[Piece, ...]:
    """`text` as text and the placeholders in it; joining every piece's characters gives
    `text` back."""
    return _pair_html(_scan(text, syntaxes, hash_is_placeholder=False))


def _scan(text: str, syntaxes: Syntax, *, hash_is_placeholder: bool) -> list[Piece]:
    pieces: list[Piece] = []
    pattern = _pattern(syntaxes)
    pos = 0
    while pos < len(text):
        match = pattern.search(text, pos)
        if hash_is_placeholder:
            hash_at = text.find("#", pos)
            if hash_at >= 0 and (match is None or hash_at < match.start()):
                _text(pieces, text[pos:hash_at])
                pieces.append(Placeholder("#"))
                pos = hash_at + 1
                continue
        if match is None:
            break
        _text(pieces, text[pos : match.start()])
        if match.group() == "{":
            piece, end = _brace(text, match.start(), syntaxes)
        else:
            piece, end = Placeholder(match.group()), match.end()
        if piece is None:
            _text(pieces, "{")
            pos = match.start() + 1
            continue
        pieces.append(piece)
        pos = end
    _text(pieces, text[pos:])
    return pieces


def _text(pieces: list[Piece], text: str) -> None:
    if not text:
        return
    if pieces and isinstance(pieces[-1], str):
        pieces[-1] += text
    else:
        pieces.append(text)


def _matching_brace(text: str, start: int) -> int:
    """The index of the `}` closing the `{` at `start`; -1 when it is never closed."""
    depth = 0
    for index in range(start, len(text)):
        if text[index] == "{":
            depth += 1
        elif text[index] == "}":
            depth -= 1
            if depth == 0:
                return index
    return -1


def _brace(text: str, start: int, syntaxes: Syntax) -> tuple[Piece | None, int]:
    end = _matching_brace(text, start)
    if end < 0:
        return None, start + 1
    if syntaxes & Syntax.ICU:
        icu = _icu(text, start, end, syntaxes)
        if icu is not None:
            return icu, end + 1
    return Placeholder(text[start : end + 1]), end + 1


def _icu(text: str, start: int, end: int, syntaxes: Syntax) -> Wrapper | None:
    """The ICU plural/select argument text[start:end+1] as a wrapper of branch wrappers; None
    when it is not one."""
    head = _ICU_HEAD.match(text, start, end)
    if head is None:
        return None
    plural = "plural" in head.group() or "selectordinal" in head.group()
    branches: list[Piece] = []
    pos = head.end()
    while True:
        branch = _ICU_BRANCH.match(text, pos, end)
        if branch is None:
            break
        close = _matching_brace(text, branch.end() - 1)
        if close < 0 or close > end:
            return None
        message = _pair_html(_scan(text[branch.end() : close], syntaxes, hash_is_placeholder=plural))
        branches.append(Wrapper(branch.group(), "}", tuple(message)))
        pos = close + 1
    if not branches or text[pos:end].strip():
        return None
    return Wrapper(head.group(), text[pos : end + 1], tuple(branches), syntax_only=True)


def _pair_html(pieces: list[Piece]) -> tuple[Piece, ...]:
    """HTML-ish start and end tags of the same name at the same level become a wrapper."""
    out: list[Piece] = []
    open_at: list[tuple[str, int]] = []  # (tag name, index in out)
    for piece in pieces:
        name = _html_name(piece)
        if name and isinstance(piece, Placeholder) and piece.literal.startswith("</"):
            found = next((i for i in range(len(open_at) - 1, -1, -1) if open_at[i][0] == name), None)
            if found is not None:
                _, index = open_at[found]
                del open_at[found:]
                opening = out[index]
                assert isinstance(opening, Placeholder)
                children = tuple(out[index + 1 :])
                del out[index:]
                out.append(Wrapper(opening.literal, piece.literal, children))
                continue
        elif name and isinstance(piece, Placeholder) and not piece.literal.endswith("/>"):
            open_at.append((name, len(out)))
        out.append(piece)
    return tuple(out)


def _html_name(piece: Piece) -> str:
    if not isinstance(piece, Placeholder) or not piece.literal.startswith("<") or TAG_PATTERN.fullmatch(piece.literal):
        return ""
    match = _HTML_NAME.match(piece.literal)
    return match.group(1).lower() if match else ""


_NOT_PROSE = re.compile(r"\s*(?:[A-Za-z][\w+.-]*://\S*|mailto:\S+|[\w.+-]+@[\w-]+\.[\w.-]+)\s*")


def is_address(text: str) -> bool:
    """Whether `text` is a URL or an e-mail address and nothing else (not translated)."""
    return _NOT_PROSE.fullmatch(text) is not None


def has_letters(text: str) -> bool:
    """Whether `text` has a letter to translate (a string of digits, punctuation, symbols or
    whitespace has not)."""
    return any(ch.isalpha() for ch in text)
