"""`hymt make-test-model`."""
from __future__ import annotations

from hymt.checkpoint import load_checkpoint
from hymt.cli import main


def test_writes_a_loadable_checkpoint(tmp_path, capsys):
    target = tmp_path / "m"
    assert main(["make-test-model", str(target), "--family", "hunyuan-mt-chimera-7b", "--shards", "2", "--seed", "4"]) == 0
    assert capsys.readouterr().out.strip() == str(target)
    assert (target / "model.safetensors.index.json").is_file()
    assert load_checkpoint(target).special_tokens["<|extra_0|>"] >= 0


def test_unknown_family_is_an_error(tmp_path, capsys):
    assert main(["make-test-model", str(tmp_path / "m"), "--family", "gpt-2"]) == 2
    assert "HY-MT1.5-1.8B" in capsys.readouterr().err
    assert not (tmp_path / "m").exists()
