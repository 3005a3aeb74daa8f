"""ChunkStore: records survive a restart; a line cut short is dropped and the file stays usable."""
from __future__ import annotations

from hymt.eval.chunk_store import ChunkRecord, ChunkStore, run_key


def record(start, outputs):
    return ChunkRecord(start, tuple(outputs), len(outputs), 10, 20, 0.5, {"echo": 1})


def test_records_round_trip_across_instances(tmp_path):
    store = ChunkStore(tmp_path, "k", {"what": "test"})
    store.append(record(0, ["一", "二"]))
    store.append(record(2, ["三\u2028"]))
    again = ChunkStore(tmp_path, "k", {})
    assert again.get(0, 2) == record(0, ["一", "二"]) and again.get(2, 1).outputs == ("三\u2028",)
    assert again.get(0, 3) is None and again.get(4, 1) is None  # another chunk size is another chunk
    assert (tmp_path / "k.json").read_text(encoding="utf-8").strip().startswith("{")


def test_a_cut_line_is_ignored_and_the_next_record_starts_a_line(tmp_path):
    store = ChunkStore(tmp_path, "k", {})
    store.append(record(0, ["a"]))
    with store.path.open("a", encoding="utf-8") as f:
        f.write('{"start": 1, "outp')
    resumed = ChunkStore(tmp_path, "k", {})
    assert resumed.get(1, 1) is None
    resumed.append(record(1, ["b"]))
    assert ChunkStore(tmp_path, "k", {}).get(1, 1).outputs == ("b",)


def test_run_key_is_stable_and_sensitive():
    parts = {"model": "m", "options": {"b": 1, "a": 2}}
    assert run_key(parts) == run_key({"options": {"a": 2, "b": 1}, "model": "m"})
    assert run_key(parts) != run_key({**parts, "model": "n"})
