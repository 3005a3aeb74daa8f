"""The glossary store behind /v2 and /v3 glossaries: entry parsing in DeepL's TSV and CSV, the
limits, persistence, and two processes writing one file at once."""
from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from hymt.server.glossary_entries import InvalidEntriesError, parse_entries
from hymt.server.glossary_store import (
    Dictionary,
    DictionaryNotFoundError,
    GlossaryLimitError,
    GlossaryLimits,
    GlossaryNotFoundError,
    GlossarySettings,
    GlossaryStore,
)


def parse(text: str, fmt: str = "tsv", max_term_bytes: int = 1024) -> tuple[tuple[str, str], ...]:
    return parse_entries(text, fmt, source_lang="en", target_lang="de", max_term_bytes=max_term_bytes)


def store(tmp_path: Path, **limits: int) -> GlossaryStore:
    return GlossaryStore(GlossarySettings(tmp_path / "glossaries.sqlite3", GlossaryLimits(**limits)))


def test_tsv_and_csv_entries():
    assert parse("cat\tKatze\r\n\n dog \t Hund \n") == (("cat", "Katze"), ("dog", "Hund"))
    csv_text = 'cat,Katze\n"a, b","say ""hi"""\nfish,Fisch,en,de\nwolf,loup,en,fr\n'
    assert parse(csv_text, "csv") == (("cat", "Katze"), ("a, b", 'say "hi"'), ("fish", "Fisch"))


@pytest.mark.parametrize(("text", "fmt", "detail"), [
    ("cat Katze", "tsv", "line 1 has no tab"),
    ("a\tb\tc", "tsv", "more than one tab"),
    ("cat\tKatze\ncat\tKater", "tsv", "line 2 repeats the source term 'cat' of line 1"),
    ("cat\t\u0007", "tsv", "control character U+0007"),
    ("cat\t", "tsv", "empty term"),
    ("\n \n", "tsv", "no entries"),
    ("cat", "csv", "no comma"),
    ("x" * 11 + "\ty", "tsv", "11 UTF-8 bytes; the limit is 10"),
])
def test_bad_entries_name_the_line(text, fmt, detail):
    with pytest.raises(InvalidEntriesError, match="Invalid glossary entries provided") as info:
        parse(text, fmt, max_term_bytes=10)
    assert detail in str(info.value)


def test_unknown_entries_format():
    with pytest.raises(ValueError, match="Value for 'entries_format' not supported.*tsv, csv"):
        parse("a\tb", "xlsx")


def test_dictionaries_merge_replace_and_delete(tmp_path):
    s = store(tmp_path)
    info = s.create("pets", [Dictionary("en", "de", (("cat", "Katze"), ("dog", "Hund")))])
    gid = info.glossary_id
    updated = s.update(gid, "animals", [Dictionary("en", "de", (("cat", "Kater"), ("cow", "Kuh"))),
                                        Dictionary("de", "en", (("Katze", "cat"),))])
    assert updated.name == "animals"
    assert [(d.source_lang, d.target_lang, d.entry_count) for d in updated.dictionaries] == [
        ("en", "de", 3), ("de", "en", 1)]
    assert s.entries(gid, "en", "de") == (("cat", "Kater"), ("dog", "Hund"), ("cow", "Kuh"))
    assert s.replace_dictionary(gid, Dictionary("en", "de", (("bird", "Vogel"),))).entry_count == 1
    assert s.entries(gid, "en", "de") == (("bird", "Vogel"),)
    s.delete_dictionary(gid, "de", "en")
    with pytest.raises(DictionaryNotFoundError, match="No dictionary found for language pair de-en"):
        s.entries(gid, "de", "en")
    s.delete(gid)
    with pytest.raises(GlossaryNotFoundError):
        s.get(gid)
    with pytest.raises(ValueError, match="more than once"):
        s.create("twice", [Dictionary("en", "de", (("a", "b"),)), Dictionary("en", "de", (("c", "d"),))])


def test_glossaries_persist_and_the_file_is_in_wal_mode(tmp_path):
    first = store(tmp_path)
    gid = first.create("kept", [Dictionary("en", "fr", (("cat", "chat"),))]).glossary_id
    first.close()
    again = store(tmp_path)
    assert [g.glossary_id for g in again.list()] == [gid]
    assert again.entries(gid, "en", "fr") == (("cat", "chat"),)
    with sqlite3.connect(tmp_path / "glossaries.sqlite3") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_default_file_is_beside_the_translation_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HYMT_CACHE_DIR", str(tmp_path / "cache"))
    assert GlossarySettings().file == tmp_path / "cache" / "glossaries.sqlite3"


@pytest.mark.parametrize(("limits", "write", "scope"), [
    ({"max_glossaries": 1}, lambda s, gid: s.create("two", [Dictionary("en", "de", (("x", "y"),))]), "store"),
    ({"max_glossary_entries": 2}, lambda s, gid: s.update(gid, None, [Dictionary("en", "de", (("x", "y"),))]),
     "glossary"),
    ({"max_glossary_bytes": 20}, lambda s, gid: s.replace_dictionary(gid, Dictionary("en", "de", (
        ("a long term", "ein langer Begriff"),))), "glossary"),
    ({"max_total_entries": 3}, lambda s, gid: s.create("two", [Dictionary("en", "de", (("x", "y"), ("z", "w")))]),
     "store"),
    ({"max_total_bytes": 30}, lambda s, gid: s.create("two", [Dictionary("fr", "de", (("chat", "Katze"),)),
                                                              Dictionary("en", "fr", (("dog", "chien"),))]), "store"),
    ({"max_term_bytes": 4}, lambda s, gid: s.update(gid, "a long name", []), "glossary"),
])
def test_limits_refuse_the_whole_write(tmp_path, limits, write, scope):
    s = store(tmp_path, **limits)
    gid = s.create("one", [Dictionary("en", "de", (("cat", "Katze"), ("dog", "Hund")))]).glossary_id
    before = [(g, s.entries(g.glossary_id, "en", "de")) for g in s.list()]
    with pytest.raises(GlossaryLimitError) as info:
        write(s, gid)
    assert info.value.scope == scope
    assert [(g, s.entries(g.glossary_id, "en", "de")) for g in s.list()] == before


def test_limits_are_validated():
    with pytest.raises(ValueError, match="max_glossaries must be an integer >= 1"):
        GlossaryLimits(max_glossaries=0)


def _create_many(path: str, count: int, results: multiprocessing.Queue) -> None:
    s = GlossaryStore(GlossarySettings(Path(path), GlossaryLimits(max_glossaries=10)))
    made = 0
    for i in range(count):
        try:
            s.create(f"g{i}", [Dictionary("en", "de", ((f"term {i}", f"Begriff {i}"),))])
            made += 1
        except GlossaryLimitError:
            pass
    results.put(made)


def test_two_processes_share_the_file_and_its_limits(tmp_path):
    path = str(tmp_path / "shared.sqlite3")
    GlossaryStore(GlossarySettings(Path(path)))  # the schema exists before the race
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    workers = [context.Process(target=_create_many, args=(path, 8, results)) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    made = [results.get(timeout=5) for _ in workers]
    assert sum(made) == 10  # 16 attempts, the limit held across processes
    assert len(GlossaryStore(GlossarySettings(Path(path))).list()) == 10
