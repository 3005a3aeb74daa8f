"""TranslationCache: SQLite, keyed by everything that shapes an answer, thread-safe."""
from __future__ import annotations

import sqlite3
import threading

from hymt.translate.cache import CacheKey, TranslationCache, default_cache_path


def _key(**changes) -> CacheKey:
    fields = dict(model="m", family="HY-MT1.5-1.8B", source="en", target="de", template="default",
                  options=((), None, None, "text"), sampling="greedy", text="Hello.")
    fields.update(changes)
    return CacheKey(**fields)


def test_put_get_and_key_fields(tmp_path):
    cache = TranslationCache(tmp_path / "c.sqlite3")
    cache.put(_key(), "Hallo.")
    assert cache.get(_key()) == "Hallo."
    assert cache.get(_key(text="He\u0301llo.".replace("e\u0301", "é"))) is None
    for change in (dict(model="n"), dict(target="fr"), dict(template="context"), dict(sampling="x"),
                   dict(options=((("a", "b"),), None, None, "text")), dict(source=None)):
        assert cache.get(_key(**change)) is None, change
    # NFC normalisation: a decomposed accent hits the composed key
    cache.put(_key(text="Café."), "Kaffee.")
    assert cache.get(_key(text="Cafe\u0301.")) == "Kaffee."
    assert len(cache) == 2
    cache.close()


def test_wal_persistence_and_threads(tmp_path):
    path = tmp_path / "sub" / "c.sqlite3"
    cache = TranslationCache(path)
    threads = [threading.Thread(target=lambda i=i: cache.put(_key(text=f"t{i}"), f"u{i}")) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    found = cache.get_many([_key(text=f"t{i}") for i in range(16)])
    assert sorted(found.values()) == sorted(f"u{i}" for i in range(16))
    cache.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    reopened = TranslationCache(path)
    assert reopened.get(_key(text="t3")) == "u3"
    reopened.clear()
    assert len(reopened) == 0
    reopened.close()


def test_default_path_honours_env(monkeypatch, tmp_path):
    monkeypatch.delenv("HYMT_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache_path() == tmp_path / "hymt" / "translations.sqlite3"
    monkeypatch.setenv("HYMT_CACHE_DIR", str(tmp_path / "x"))
    assert default_cache_path() == tmp_path / "x" / "translations.sqlite3"
