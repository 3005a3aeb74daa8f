"""`hymt translate` on a tiny checkpoint with the real engines (random weights: the text is
noise, so these tests check the plumbing: exit codes, JSON shape, files, formats kept)."""
from __future__ import annotations

import importlib.util
import io
import json

import pytest

from hymt.cli import main

BACKENDS = [b for b, module in (("transformers", "hymt.engine.backends.transformers_engine"),
                                ("native", "hymt.engine.native_engine"))
            if importlib.util.find_spec(module) is not None]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    from hymt.testing import write_tiny_checkpoint

    return str(write_tiny_checkpoint(tmp_path_factory.mktemp("cli") / "HY-MT1.5-1.8B", "HY-MT1.5-1.8B"))


@pytest.fixture(autouse=True)
def _private_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("HYMT_CACHE_DIR", str(tmp_path / "cache"))


@pytest.mark.parametrize("backend", BACKENDS)
def test_text_to_json(tiny_model, backend, capsys):
    assert main(["translate", "Hello world.", "--to", "de", "--from", "en", "--model", tiny_model,
                 "--engine", backend, "--device", "cpu", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["target"] == "de" and data["source"] == "en"
    assert data["segments"][0]["source"] == "Hello world."
    assert set(data) >= {"text", "segments", "prompt_tokens", "completion_tokens", "elapsed_s", "cached", "issues"}
    assert data["prompt_tokens"] > 0 and data["completion_tokens"] > 0


def test_plain_text_to_stdout(tiny_model, capsys):
    assert main(["translate", "Hi.", "--to", "de", "--from", "en", "--model", tiny_model,
                 "--engine", BACKENDS[-1], "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    assert out.endswith("\n") and not out.startswith("{")


def test_file_with_output_keeps_markdown(tiny_model, tmp_path, capsys):
    src = tmp_path / "doc.md"
    src.write_text("# Title\n\n```\ncode stays\n```\n\n- item one\n", encoding="utf-8")
    out = tmp_path / "doc.de.md"
    assert main(["translate", str(src), "--to", "de", "--from", "en", "--model", tiny_model,
                 "--engine", BACKENDS[0], "--device", "cpu", "-o", str(out), "--no-cache"]) == 0
    text = out.read_text(encoding="utf-8")
    assert text.startswith("# ") and "\n\n```\ncode stays\n```\n\n- " in text and text.endswith("\n")
    assert capsys.readouterr().out == ""


def test_stdin_and_glossary_json(tiny_model, monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO("The cat sleeps.\n\nThe dog barks.\n"))
    assert main(["translate", "-", "--to", "de", "--from", "en", "--model", tiny_model,
                 "--engine", BACKENDS[0], "--device", "cpu", "--glossary", "cat=Katze", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [s["source"] for s in data["segments"] if s["translatable"]] == ["The cat sleeps.", "The dog barks."]
    assert data["text"].endswith("\n")


def test_bad_arguments_exit_2(tiny_model, capsys):
    assert main(["translate", "Hello", "--to", "xx", "--model", tiny_model, "--engine", BACKENDS[0]]) == 2
    assert "supported codes" in capsys.readouterr().err
    assert main(["translate", "Hello", "--to", "de", "--model", tiny_model, "--engine", BACKENDS[0],
                 "--glossary", "nope"]) == 2
    assert "SRC=TGT" in capsys.readouterr().err


def test_quantized_native_engine_translates(tiny_model, capsys):
    assert main(["translate", "Hello world.", "--to", "de", "--from", "en", "--model", tiny_model,
                 "--device", "cpu", "--quantization", "int8", "--no-retry", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["completion_tokens"] > 0 and data["segments"][0]["source"] == "Hello world."


# -- as a user runs it (python -m hymt in a subprocess) ----------------------------------------

TWO_SENTENCES = "The cat sleeps on the mat. The dog barks at the moon."


def test_quiet_by_default_and_issues_on_stderr(tiny_model, hymt_cli):
    """Engine internals only with -v; the quality guard's issues in text mode, none with -q.
    Random weights loop to the length limit, so the guard always finds something."""
    args = ("translate", TWO_SENTENCES, "--to", "de", "--from", "en", "--model", tiny_model, "--no-retry")
    verbose = hymt_cli.run(*args, "--json", "-v")
    assert verbose.returncode == 0, verbose.stderr
    assert "INFO" in verbose.stderr and "KV cache" in verbose.stderr
    data = json.loads(verbose.stdout)
    flagged = [(n, s) for n, s in enumerate((s for s in data["segments"] if s["translatable"]), 1) if s["issues"]]
    assert flagged and data["issues"], "random weights always leave an issue to report"

    default = hymt_cli.run(*args)
    assert default.returncode == 0 and default.stdout.strip()
    assert "INFO" not in default.stderr and "KV cache" not in default.stderr
    assert f"{len(flagged)} of {len(data['segments'])} segments may be badly translated" in default.stderr
    for number, segment in flagged:
        line = next(line for line in default.stderr.splitlines() if line.startswith(f"  segment {number} "))
        assert repr(segment["source"]) in line and all(code in line for code in segment["issues"]), line
    assert "(the answer was cut at the token limit)" in default.stderr or "length" not in data["issues"]

    quiet = hymt_cli.run(*args, "-q")
    assert quiet.returncode == 0 and quiet.stdout == default.stdout and quiet.stderr == ""


@pytest.mark.parametrize(("argv", "stdin", "message"), [
    (["", "--to", "fr"], "", "nothing to translate: the text is empty"),
    (["   \n", "--to", "fr"], "", "nothing to translate: the text is empty"),
    (["-", "--to", "fr"], " \n", "nothing to translate: stdin is empty"),
    (["Hello", "--to", "klingon"], "", "supported codes"),
    (["Hello", "--to", "de", "--from", "elvish"], "", "supported codes"),
    (["notes/chapter1", "--to", "fr"], "", "no such file: notes/chapter1"),
    (["chapter 1.md", "--to", "fr"], "", "no such file: chapter 1.md"),
    (["subs.SRT", "--to", "fr"], "", "no such file: subs.SRT"),
    (["Hello", "--to", "de", "-o", "no/such/dir/out.txt"], "", "no/such/dir does not exist"),
    (["Hello", "--to", "de", "--glossary", "cat"], "", "SRC=TGT"),
])
def test_arguments_are_checked_before_the_model_loads(hymt_cli, tmp_path, argv, stdin, message):
    """--model names no checkpoint: an error about the arguments proves none was loaded."""
    result = hymt_cli.run("translate", *argv, "--model", str(tmp_path / "no-model"), stdin=stdin, cwd=tmp_path)
    assert result.returncode == 2
    assert message in result.stderr and "no-model" not in result.stderr, result.stderr


def test_empty_file_and_directory_are_errors(hymt_cli, tmp_path):
    (tmp_path / "empty.txt").write_text("\n\n", encoding="utf-8")
    empty = hymt_cli.run("translate", "empty.txt", "--to", "fr", "--model", "unused", cwd=tmp_path)
    assert empty.returncode == 2 and "nothing to translate: empty.txt is empty" in empty.stderr
    folder = hymt_cli.run("translate", str(tmp_path), "--to", "fr", "--model", "unused")
    assert folder.returncode == 2 and "is a directory" in folder.stderr


def test_text_that_only_mentions_a_path_is_translated_as_text():
    from hymt.cli.translate_cmd import looks_like_path

    assert looks_like_path("notes/ch1") and looks_like_path("book.md") and looks_like_path("my subs.srt")
    for text in ("Read the A/B test results.", "see https://example.com/docs", "Hello", "two\nlines.md"):
        assert not looks_like_path(text), text


def test_file_progress_bar_stays_with_the_final_count(tiny_model, hymt_cli, tmp_path):
    paragraphs = "\n\n".join(f"Paragraph {i} starts here. It ends here." for i in range(40))
    (tmp_path / "letter.txt").write_text(paragraphs + "\n", encoding="utf-8")
    result = hymt_cli.run("translate", "letter.txt", "--to", "de", "--from", "en", "--model", tiny_model,
                          "--no-retry", "--json", "-o", "letter.de.json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    # a file's translation goes to -o; with --json, stdout gets the summary and its segments
    total = sum(s["translatable"] for s in json.loads(result.stdout)["segments"])
    assert total == 80 and (tmp_path / "letter.de.json").read_text()
    assert result.stderr.endswith("\n"), "the bar is left on its own line"
    final = result.stderr.rstrip("\n").replace("\r", "\n").split("\n")[-1]
    assert final.startswith("letter.txt: 100%") and f"{total}/{total}" in final and "seg/s" in final, final


def test_template_inputs_reach_the_translation(hymt_cli, tmp_path):
    from hymt.testing import write_tiny_checkpoint

    chimera = write_tiny_checkpoint(tmp_path / "Hunyuan-MT-Chimera-7B", "Hunyuan-MT-Chimera-7B")
    result = hymt_cli.run("translate", "Good morning.", "--to", "de", "--from", "en", "--model", str(chimera),
                          "--fusion", "2", "--no-cache", "--json")
    assert result.returncode == 0, result.stderr
    body = json.loads(result.stdout)
    assert body["prompt_tokens"] > body["segments"][0]["prompt_tokens"]  # two candidate passes counted too
    refused = hymt_cli.run("translate", "Good morning.", "--to", "de", "--model", str(chimera),
                           "--template", "personalization", "--preference", "Be brief.")
    assert refused.returncode == 2 and "personalization" in refused.stderr
