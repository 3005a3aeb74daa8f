"""Document formats as runs: what is markup (kept verbatim) and what is text (translated).

Each parser returns a list of `Run`s whose texts concatenate to the input exactly. The
document builder (document.py) then splits text runs into sentences and budget chunks.

- text: every line is its own unit (line breaks are kept where they are: lists, addresses,
  poems and subtitles keep their lines); blank lines separate paragraphs.
- markdown: code blocks (fenced, and indented outside lists), front matter, link
  definitions, table rules and raw HTML tags are markup; heading, list, task and quote
  markers and indentation are markup; table cells are text. The lines of one paragraph are
  one unit, so a sentence wrapped over two lines is translated whole.
- srt: cue indices, timings and blank lines are markup; each cue's text is one unit, never
  split into sentences (one request per cue keeps cue count and timing aligned).
- html: tags, comments, doctype and the contents of script/style/pre/code/textarea are
  markup; the text between tags is translated. Attribute values (alt, title) are not.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

FORMATS = ("text", "markdown", "html", "srt")


@dataclass(frozen=True)
class Run:
    """A stretch of the input: markup (kept) or text (translated).

    `sentences` False keeps a text run in one piece (subtitle cues); it is still split if it
    exceeds the token budget.
    """

    text: str
    markup: bool
    sentences: bool = True


class _Runs:
    """Collects runs, merging neighbours of the same kind."""

    def __init__(self) -> None:
        self.runs: list[Run] = []

    def markup(self, text: str) -> None:
        self.add(Run(text, True))

    def text(self, text: str, sentences: bool = True) -> None:
        self.add(Run(text, False, sentences))

    def add(self, run: Run) -> None:
        if not run.text:
            return
        last = self.runs[-1] if self.runs else None
        if last and last.markup and run.markup:
            self.runs[-1] = Run(last.text + run.text, True)
        else:
            self.runs.append(run)

    def continue_line(self, text: str) -> bool:
        """Join `text` to the previous text run when only a line ending lies between them
        (a wrapped paragraph line, a cue's second line). Returns False if it cannot."""
        if len(self.runs) < 2 or self.runs[-2].markup:
            return False
        eol = self.runs[-1]
        if not eol.markup or eol.text not in ("\n", "\r\n", "\r"):
            return False
        prev = self.runs[-2]
        self.runs[-2:] = [Run(prev.text + eol.text + text, False, prev.sentences)]
        return True


def _lines(text: str) -> list[tuple[str, str]]:
    """(body, line ending) pairs; the ending is "" on a last line without one."""
    result = []
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        result.append((body, line[len(body) :]))
    return result


def text_runs(text: str) -> list[Run]:
    runs = _Runs()
    for body, eol in _lines(text):
        runs.text(body)
        runs.markup(eol)
    return runs.runs


# --- markdown ----------------------------------------------------------------------------

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_BLOCK_PREFIX = re.compile(
    r"^[ \t]*(?:>[ \t]?)*[ \t]*"
    r"(?:#{1,6}(?=[ \t]|$)[ \t]*|(?:[-*+]|\d{1,9}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?)?"
)
_HEADING_TAIL = re.compile(r"[ \t]+#+[ \t]*$")
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+")
_TABLE_RULE = re.compile(r"^[ \t]*\|?[ \t]*:?-{1,}:?[ \t]*(?:\|[ \t]*:?-{1,}:?[ \t]*)*\|?[ \t]*$")
_LINK_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*\S+")
_THEMATIC = re.compile(r"^ {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$")
_HTML_LINE = re.compile(r"^ {0,3}</?[A-Za-z][^>]*>")


def markdown_runs(text: str) -> list[Run]:
    runs = _Runs()
    lines = _lines(text)
    start = _front_matter_end(lines)
    for body, eol in lines[:start]:
        runs.markup(body + eol)
    fence: str | None = None
    prev = "blank"  # kind of the previous line: blank, para, other, code
    in_list = False
    for body, eol in lines[start:]:
        if fence is not None:
            runs.markup(body + eol)
            if body.strip().startswith(fence) and not body.strip().strip(fence[0]):
                fence = None
            continue
        indented = body.startswith("    ") or body.startswith("\t")
        if body.strip() and not indented and prev == "blank" and not _LIST_ITEM.match(body):
            in_list = False
        fence_match = _FENCE.match(body)
        if fence_match:
            fence, prev = fence_match.group(1), "other"
            runs.markup(body + eol)
            continue
        if not body.strip():
            runs.markup(body + eol)
            prev = "blank"
            continue
        if indented and prev in ("blank", "code") and not in_list:
            runs.markup(body + eol)
            prev = "code"
            continue
        if _LIST_ITEM.match(body):
            in_list = True
        prev = _markdown_line(runs, body, prev)
        runs.markup(eol)
    return runs.runs


def _front_matter_end(lines: list[tuple[str, str]]) -> int:
    if not lines or lines[0][0] != "---":
        return 0
    for i, (body, _) in enumerate(lines[1:], start=1):
        if body in ("---", "..."):
            return i + 1
    return 0


def _markdown_line(runs: _Runs, body: str, prev: str) -> str:
    """Emit one non-blank, non-code line; returns its kind for the next line."""
    if _THEMATIC.match(body) or _TABLE_RULE.match(body) and "-" in body and "|" in body or _LINK_DEF.match(body):
        runs.markup(body)
        return "other"
    if body.lstrip().startswith("|"):
        _table_row(runs, body)
        return "other"
    if _HTML_LINE.match(body):
        for run in html_runs(body):
            runs.add(run)
        return "other"
    prefix = _BLOCK_PREFIX.match(body).group(0)
    content = body[len(prefix) :]
    heading = prefix.lstrip(" \t>").startswith("#")
    tail = _HEADING_TAIL.search(content) if heading else None
    if tail:
        content = content[: tail.start()]
    if not prefix.strip() and prev == "para" and runs.continue_line(body):
        return "para"  # a wrapped paragraph line continues the previous line's unit
    runs.markup(prefix)
    runs.text(content)
    if tail:
        runs.markup(tail.group(0))
    return "other" if heading else "para"


def _table_row(runs: _Runs, body: str) -> None:
    for i, cell in enumerate(re.split(r"(?<!\\)\|", body)):
        if i:
            runs.markup("|")
        core = cell.strip()
        if not core:
            runs.markup(cell)
            continue
        lead = cell[: len(cell) - len(cell.lstrip())]
        runs.markup(lead)
        runs.text(core)
        runs.markup(cell[len(lead) + len(core) :])


# --- srt -----------------------------------------------------------------------------------

_TIMING = re.compile(r"-->")


def srt_runs(text: str) -> list[Run]:
    runs = _Runs()
    expect_index = True
    in_cue = False
    for body, eol in _lines(text):
        stripped = body.strip().lstrip("\ufeff")
        if not stripped:
            runs.markup(body + eol)
            expect_index, in_cue = True, False
        elif _TIMING.search(body) and not in_cue:
            runs.markup(body + eol)
            in_cue, expect_index = True, False
        elif expect_index and stripped.isdigit():
            runs.markup(body + eol)
            expect_index = False
        else:
            lead = body[: len(body) - len(body.lstrip())]
            if not (in_cue and runs.continue_line(body)):
                runs.markup(lead)
                runs.text(body[len(lead) :], sentences=False)
            runs.markup(eol)
            in_cue, expect_index = True, False
    return runs.runs


# --- html ----------------------------------------------------------------------------------

_HTML_MARKUP = re.compile(
    r"<!--.*?-->|<!\[CDATA\[.*?\]\]>|<![^>]*>|<\?.*?\?>"
    r"|<(script|style|pre|code|textarea)\b[^>]*>.*?</\1\s*>"
    r"|</?[A-Za-z][^>]*>",
    re.S | re.I,
)


def html_runs(text: str) -> list[Run]:
    runs = _Runs()
    pos = 0
    for match in _HTML_MARKUP.finditer(text):
        runs.text(text[pos : match.start()])
        runs.markup(match.group(0))
        pos = match.end()
    runs.text(text[pos:])
    return runs.runs


PARSERS = {"text": text_runs, "markdown": markdown_runs, "srt": srt_runs, "html": html_runs}
