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
