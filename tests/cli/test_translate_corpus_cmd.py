"""`hymt translate-corpus` on a tiny checkpoint (random weights: the text is gibberish, the
shape is real): columns and ids kept, an interrupted run resumed by the same command, and the
errors it gives before any model loads."""
from __future__ import annotations

import json
import signal
import subprocess
import time

import pytest

from hymt.cli import main
from hymt.scale.corpus_work import work_path


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    from hymt.testing import write_tiny_checkpoint

    return str(write_tiny_checkpoint(tmp_path_factory.mktemp("corpus-cli") / "HY-MT1.5-1.8B", "HY-MT1.5-1.8B"))


@pytest.fixture(autouse=True)
def _own_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("HYMT_CACHE_DIR", str(tmp_path / "cache"))


def test_jsonl_with_ids_and_detected_sources(tiny_model, tmp_path, capsys):
    source = tmp_path / "in.jsonl"
    rows = [{"uid": 1, "sentence": "Good morning, everyone."}, {"uid": 2, "sentence": "Bonjour tout le monde."},
            {"uid": 3, "sentence": ""}]
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    assert main(["translate-corpus", str(source), "--to", "de", "-o", str(out), "--column", "sentence",
                 "--id-column", "uid", "--model", tiny_model, "--device", "cpu", "--no-progress"]) == 0
    written = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(w["uid"], w["sentence"]) for w in written] == [(r["uid"], r["sentence"]) for r in rows]
    assert [w["source_lang"] for w in written] == ["en", "fr", None]
    assert written[0]["translation"] and written[2]["translation"] == ""
    assert "3 rows -> " in capsys.readouterr().err
    assert not work_path(out).exists()


def test_an_interrupted_run_is_resumed_by_the_same_command(tiny_model, tmp_path, hymt_cli):
    source = tmp_path / "in.txt"
    source.write_text("".join(f"Sentence number {i} is short.\n" for i in range(48)), encoding="utf-8")
    out = tmp_path / "out.txt"
    args = ["translate-corpus", str(source), "--to", "de", "--from", "en", "-o", str(out), "--model", tiny_model,
            "--device", "cpu", "--batch-size", "4", "--no-cache"]
    env = {"HYMT_CACHE_DIR": str(tmp_path / "cache")}
    first = hymt_cli.popen(*args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    work = work_path(out)
    deadline = time.monotonic() + 120
    while not (work.exists() and len(work.read_text(encoding="utf-8").splitlines()) > 8):
        assert first.poll() is None and time.monotonic() < deadline, first.communicate()
        time.sleep(0.05)
    first.send_signal(signal.SIGINT)
    _, err = first.communicate(timeout=60)
    assert first.returncode == 130 and "the same command resumes" in err
    done_before = len(work.read_text(encoding="utf-8").splitlines()) - 1
    assert 8 <= done_before < 48 and not out.exists()

    second = hymt_cli.run(*args, env=env)
    assert second.returncode == 0, second.stderr
    assert f"({done_before} from an earlier run)" in second.stderr and not work.exists()
    fresh = hymt_cli.run(*args[:7], str(tmp_path / "fresh.txt"), *args[8:], env=env)
    assert fresh.returncode == 0, fresh.stderr
    assert out.read_text(encoding="utf-8") == (tmp_path / "fresh.txt").read_text(encoding="utf-8")
    assert len(out.read_text(encoding="utf-8").splitlines()) == 48


@pytest.mark.parametrize(("extra", "message"), [
    (["--column", "body"], "has no column 'body'; its columns: text"),
    (["--to", "xx"], "xx"),
    (["--format", "jsonl", "--id-column", "uid"], "has no column 'uid'"),
    (["--engine", "transformers", "--kv-cache-dtype", "fp8"], "kv_cache_dtype is a setting of the native engine"),
])
def test_bad_arguments_fail_before_any_model_loads(tmp_path, capsys, extra, message):
    source = tmp_path / "in.jsonl"
    source.write_text('{"text": "Hi"}\n', encoding="utf-8")
    args = ["translate-corpus", str(source), "--to", "de", "-o", str(tmp_path / "o.jsonl"),
            "--model", str(tmp_path / "no-such-model"), *extra]
    assert main(args) == 2
    assert message in capsys.readouterr().err


def test_missing_input_and_existing_output(tmp_path, capsys):
    assert main(["translate-corpus", str(tmp_path / "none.txt"), "--to", "de", "-o", str(tmp_path / "o.txt")]) == 2
    assert "no such file" in capsys.readouterr().err
    (tmp_path / "in.txt").write_text("Hi\n", encoding="utf-8")
    (tmp_path / "o.txt").write_text("old\n", encoding="utf-8")
    assert main(["translate-corpus", str(tmp_path / "in.txt"), "--to", "de", "-o", str(tmp_path / "o.txt")]) == 2
    assert "already exists; --overwrite replaces it" in capsys.readouterr().err


def test_ray_without_ray_installed_names_the_extra(tmp_path, hymt_cli):
    fake = tmp_path / "no-ray" / "ray"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError(\"No module named 'ray'\")\n")
    (tmp_path / "in.txt").write_text("Hi\n", encoding="utf-8")
    env = hymt_cli.env()
    done = subprocess.run(hymt_cli.command("translate-corpus", str(tmp_path / "in.txt"), "--to", "de", "-o",
                                           str(tmp_path / "o.txt"), "--ray"),
                          env={**env, "PYTHONPATH": f"{fake.parent}:{env['PYTHONPATH']}"},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and 'pip install "hymt[ray]"' in done.stderr and "ray" in done.stderr
