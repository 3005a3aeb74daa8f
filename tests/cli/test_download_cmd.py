"""`hymt download` (no network: offline mode and local directories only)."""
from __future__ import annotations

import re

from hymt.cli import main
from hymt.testing import write_tiny_checkpoint


def test_local_directory_prints_its_path(tmp_path, capsys):
    directory = write_tiny_checkpoint(tmp_path / "m", "Hy-MT2-1.8B")
    assert main(["download", str(directory)]) == 0
    assert capsys.readouterr().out.strip() == str(directory.resolve())


def test_offline_hub_id_fails_with_a_hint_for_serve_and_translate(hymt_cli, tmp_path):
    env = {"HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    result = hymt_cli.run("download", "hymt-tests/No-Such-Model", "--revision", "main", env=env)
    assert result.returncode == 2
    err = result.stderr
    assert "could not download 'hymt-tests/No-Such-Model'" in err and "copy the checkpoint directory" in err
    # download takes no --model: every --model it mentions belongs to serve or translate
    assert re.findall(r"(\w+ \w+) --model", err) == ["hymt serve", "hymt translate"], err
    assert "--model /path/to/No-Such-Model" in err


def test_not_a_hub_id_is_named_as_such(capsys):
    assert main(["download", "not-a-hub-id"]) == 2
    err = capsys.readouterr().err
    assert "'not-a-hub-id' is not a Hugging Face hub id" in err and "--model" not in err


def test_help_says_what_download_does(hymt_cli):
    result = hymt_cli.run("download", "--help")
    assert result.returncode == 0
    assert "Prints the local directory of the checkpoint" in result.stdout
    assert "copy a checkpoint directory" in result.stdout
