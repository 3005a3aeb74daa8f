"""`hymt eval` on a tiny checkpoint with the native engine (random weights: the scores are
noise, so these tests check the plumbing: table, JSON, output files, exit codes)."""
from __future__ import annotations

import json

import pytest

from hymt.cli import main

SOURCES = ["Hello world.", "The cat sleeps."]
REFERENCES = ["你好，世界。", "猫在睡觉。"]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    from hymt.testing import write_tiny_checkpoint

    return str(write_tiny_checkpoint(tmp_path_factory.mktemp("cli-eval") / "HY-MT1.5-1.8B", "HY-MT1.5-1.8B"))


@pytest.fixture(autouse=True)
def _private_dirs(monkeypatch, tmp_path):
    monkeypatch.setenv("HYMT_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def files(tmp_path):
    src, ref = tmp_path / "devtest.eng_Latn", tmp_path / "devtest.zho_Hans"
    src.write_text("\n".join(SOURCES) + "\n", encoding="utf-8")
    ref.write_text("\n".join(REFERENCES) + "\n", encoding="utf-8")
    return src, ref


def eval_args(model, *extra):
    return ["eval", "--model", model, "--device", "cpu", "--no-retry", "--no-progress", *extra]


@pytest.mark.slow
def test_compare_quantization_without_references(tiny_model, files, tmp_path, capsys):
    out = tmp_path / "q.json"
    assert main(eval_args(tiny_model, "--src", str(files[0]), "--to", "zh",
                          "--compare-quantization", "bf16,int8,int4", "--json", str(out))) == 0
    text = capsys.readouterr().out
    table = text.split("\n\n")[1].splitlines()
    assert [line.split()[0] for line in table] == ["system", "bf16", "int8", "int4"]
    assert table[1].split()[1] == "100.00"  # bf16's fidelity to itself
    data = json.loads(out.read_text(encoding="utf-8"))
    assert [r["scheme"] for r in data["rows"]] == ["bf16", "int8", "int4"]
    assert all(r["completion_tokens"] > 0 and r["tokens_per_s"] > 0 for r in data["rows"])
    assert data["rows"][0]["fidelity_chrf"]["score"] == pytest.approx(100.0)
    assert data["rows"][1]["memory"]["weights_bytes"] < data["rows"][0]["memory"]["weights_bytes"]
    assert all(len(open(r["outputs"], encoding="utf-8").read().splitlines()) == 2 for r in data["rows"])
    assert data["data"]["source"] == "en"  # from the file name


def test_answer_tokens_force_every_answers_length(tiny_model, files, tmp_path):
    out = tmp_path / "forced.json"
    assert main(eval_args(tiny_model, "--src", str(files[0]), "--ref", str(files[1]), "--answer-tokens", "7",
                          "--json", str(out))) == 0
    row = json.loads(out.read_text(encoding="utf-8"))["rows"][0]
    assert row["completion_tokens"] == 7 * len(SOURCES)


def test_scores_with_references_and_output_file(tiny_model, files, tmp_path, capsys):
    hyp = tmp_path / "hyp.zh"
    assert main(eval_args(tiny_model, "--src", str(files[0]), "--ref", str(files[1]), "-o", str(hyp), "--ter")) == 0
    text = capsys.readouterr().out
    assert "nrefs:1|case:mixed|eff:no|tok:zh|smooth:exp|version:" in text and "BLEU tokenize: zh" in text
    assert text.split("\n\n")[1].splitlines()[0].split()[:4] == ["system", "BLEU", "chrF++", "TER"]
    assert len(hyp.read_text(encoding="utf-8").splitlines()) == 2 and (tmp_path / "hyp.zh.work").is_dir()


def test_bad_inputs_exit_2_naming_the_option(tiny_model, files, tmp_path, capsys, monkeypatch):
    src, ref = files
    short = tmp_path / "short.zh"
    short.write_text("一。\n", encoding="utf-8")
    empty = tmp_path / "empty.en"
    empty.write_text("", encoding="utf-8")
    cases = [
        (["--src", str(src), "--ref", str(short), "--to", "zh"], "has 2 lines but --ref"),
        (["--src", str(src), "--ref", str(ref), "--to", "xx"],
         "--to: unknown language 'xx'; valid: a hymt code (zh, en"),
        (["--src", str(empty), "--to", "zh", "--compare-quantization", "bf16,int8"], "--src"),
        (["--src", str(src), "--to", "zh", "--compare-quantization", "bf16,int3"], "--compare-quantization got"),
        (["--src", str(src), "--ref", str(ref), "--fusion", "2"], "no 'fusion' template (needed for fusion)"),
        (["--to", "zh"], "give exactly one of --src, --tsv or --flores"),
        (["--src", str(src), "--to", "zh"], "--ref is required"),
        (["--src", str(src), "--ref", str(ref), "--answer-tokens", "0"], "--answer-tokens must be at least 1"),
    ]
    for args, message in cases:
        assert main(eval_args(tiny_model, *args)) == 2, args
        err = capsys.readouterr().err
        assert message in err and err.startswith("hymt: error: "), (args, err)
    monkeypatch.setattr("hymt.engine.quant.schemes.supported_schemes", lambda device: ("int8", "int4"))
    assert main(eval_args(tiny_model, "--src", str(src), "--to", "zh", "--compare-quantization", "fp8")) == 2
    assert "--compare-quantization: quantization 'fp8' needs a GPU" in capsys.readouterr().err
