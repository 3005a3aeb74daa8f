"""hymt's sentence splitter against pysbd and sentencex on a hand-labelled set.

tests/translate/data/sentence_boundaries.jsonl holds one paragraph a line: its language, what it
exercises (`tags`), its sentences and the separator between them (`sep`: one string for all gaps,
or a list; a space when absent). A boundary is the offset where a sentence other than the first
starts. An over-split is a predicted boundary that is not in the labels, an under-split a labelled
one that was not predicted. `python -m pytest tests/translate/test_sentence_benchmark.py -q -s`
prints the table that docs/quality/sentence-splitting.md copies.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pysbd
import pytest
import sentencex

from hymt.errors import UnknownLanguageError
from hymt.languages import Language, get_language
from hymt.translate.segmenter import split_sentences

DATA = Path(__file__).parent / "data" / "sentence_boundaries.jsonl"

# pysbd's own languages; every other one runs with its English rules.
PYSBD_LANGUAGES = frozenset(pysbd.languages.LANGUAGE_CODES)
# sentencex takes any code and falls back (to English last) where it has no rules of its own.
SENTENCEX_CODES = {"zh-Hant": "zh", "yue": "zh"}


@dataclass(frozen=True)
class Paragraph:
    id: str
    lang: str
    tags: tuple[str, ...]
    text: str
    boundaries: frozenset[int]  # offsets where a sentence other than the first starts
    holdout: bool  # written after the rules, to measure how they carry over

    @property
    def language(self) -> Language | None:
        """The hymt Language, or None for languages the models do not translate (hy, el)."""
        try:
            return get_language(self.lang)
        except UnknownLanguageError:
            return None


def _paragraph(record: dict) -> Paragraph:
    sentences = record["sentences"]
    seps = record.get("sep", " ")
    if isinstance(seps, str):
        seps = [seps] * (len(sentences) - 1)
    assert len(seps) == len(sentences) - 1, record["id"]
    text, boundaries = sentences[0], set()
    for sep, sentence in zip(seps, sentences[1:]):
        text += sep
        boundaries.add(len(text))
        text += sentence
    holdout = record.get("set") == "holdout"
    return Paragraph(record["id"], record["lang"], tuple(record["tags"]), text, frozenset(boundaries), holdout)


def load_paragraphs() -> list[Paragraph]:
    lines = DATA.read_text(encoding="utf-8").splitlines()
    return [_paragraph(json.loads(line)) for line in lines if line.strip()]


def _starts(text: str, pieces: list[str]) -> frozenset[int]:
    """Where each piece after the first starts in `text` (after any whitespace), found in order."""
    starts, cursor = set(), 0
    for i, piece in enumerate(pieces):
        core = piece.strip()
        if not core:
            continue
        found = text.find(core, cursor)
        assert found >= 0, f"piece {core!r} not found in {text!r}"
        if i and found:
            starts.add(found)
        cursor = found + len(core)
    return frozenset(starts)


def hymt_with_language(p: Paragraph) -> frozenset[int]:
    pairs = split_sentences(p.text, p.language)
    return _starts(p.text, [s for s, _ in pairs])


def hymt_without_language(p: Paragraph) -> frozenset[int]:
    return _starts(p.text, [s for s, _ in split_sentences(p.text)])


_PYSBD: dict[str, pysbd.Segmenter] = {}


def pysbd_split(p: Paragraph) -> frozenset[int]:
    code = p.lang.split("-")[0] if p.lang.split("-")[0] in PYSBD_LANGUAGES else "en"
    if p.lang == "yue":
        code = "zh"
    segmenter = _PYSBD.setdefault(code, pysbd.Segmenter(language=code, clean=False))
    return _starts(p.text, segmenter.segment(p.text))


def sentencex_split(p: Paragraph) -> frozenset[int]:
    code = SENTENCEX_CODES.get(p.lang, p.lang)
    return _starts(p.text, list(sentencex.segment(code, p.text)))


SPLITTERS: dict[str, Callable[[Paragraph], frozenset[int]]] = {
    "hymt": hymt_with_language,
    "hymt (no language)": hymt_without_language,
    "pysbd": pysbd_split,
    "sentencex": sentencex_split,
}


@dataclass(frozen=True)
class Score:
    over: int
    under: int
    exact: int  # paragraphs split exactly as labelled


def score(split: Callable[[Paragraph], frozenset[int]], paragraphs: list[Paragraph]) -> Score:
    over = under = exact = 0
    for p in paragraphs:
        predicted = split(p)
        over += len(predicted - p.boundaries)
        under += len(p.boundaries - predicted)
        exact += predicted == p.boundaries
    return Score(over, under, exact)


def table(scores: dict[str, Score], paragraphs: list[Paragraph]) -> str:
    n_bound = sum(len(p.boundaries) for p in paragraphs)
    rows = [
        f"{len(paragraphs)} paragraphs, {len({p.lang for p in paragraphs})} languages, {n_bound} boundaries",
        "| splitter | over-splits | under-splits | paragraphs exact |",
        "| --- | ---: | ---: | ---: |",
    ]
    rows += [f"| {name} | {s.over} | {s.under} | {s.exact} |" for name, s in scores.items()]
    return "\n".join(rows)


def tag_table(paragraphs: list[Paragraph]) -> str:
    """Over-splits/under-splits per tag, one column per splitter."""
    tags = sorted({tag for p in paragraphs for tag in p.tags})
    rows = [
        "| tag | paragraphs | " + " | ".join(SPLITTERS) + " |",
        "| --- | ---: |" + " ---: |" * len(SPLITTERS),
    ]
    for tag in tags:
        subset = [p for p in paragraphs if tag in p.tags]
        cells = [score(split, subset) for split in SPLITTERS.values()]
        rows.append(f"| {tag} | {len(subset)} | " + " | ".join(f"{c.over}/{c.under}" for c in cells) + " |")
    return "\n".join(rows)


@pytest.fixture(scope="module")
def paragraphs() -> list[Paragraph]:
    return load_paragraphs()


def test_hymt_beats_pysbd_and_sentencex(paragraphs):
    scores = {name: score(split, paragraphs) for name, split in SPLITTERS.items()}
    print("\nAll paragraphs: " + table(scores, paragraphs))
    for label, part in (("Development", False), ("Held out", True)):
        subset = [p for p in paragraphs if p.holdout == part]
        print(f"\n{label}: " + table({name: score(split, subset) for name, split in SPLITTERS.items()}, subset))
    print("\nOver-splits/under-splits by tag:\n" + tag_table(paragraphs))
    for library in ("pysbd", "sentencex"):
        for ours in ("hymt", "hymt (no language)"):
            assert scores[ours].over < scores[library].over, (ours, library, scores)
            assert scores[ours].under < scores[library].under, (ours, library, scores)


# The cases the splitter is known to have got wrong, each of which the set must hold.
REQUIRED_TEXTS = (
    '"Really?" she asked.', "« Tu viens ? » demanda-t-elle.", "z. B.", "Sig.", "ул.", "د.", "डॉ.",
    "am 3. Oktober", "？」と", "¿", "¡", "।", "؟", "۔", "။", "។", "།", "։", ";", "https://", "@", "...", "…",
)
REQUIRED_TAGS = (
    "quote", "abbreviation", "ordinal", "decimal", "initials", "url", "email", "ellipsis", "list",
    "parentheses", "cjk", "thai-space", "danda", "arabic-punct", "khmer", "burmese", "tibetan",
    "armenian", "greek",
)


def test_labelled_set_covers_the_known_failures(paragraphs):
    hymt_languages = {p.lang for p in paragraphs if p.language is not None}
    assert len(paragraphs) >= 80 and len(hymt_languages) >= 20
    texts = "\n".join(p.text for p in paragraphs)
    assert [t for t in REQUIRED_TEXTS if t not in texts] == []
    tags = {tag for p in paragraphs for tag in p.tags}
    assert [t for t in REQUIRED_TAGS if t not in tags] == []
    assert all(p.text == p.text.strip() and all(b > 0 for b in p.boundaries) for p in paragraphs)
    assert len({p.id for p in paragraphs}) == len(paragraphs)
