"""`hymt download` (no network: offline mode and local directories only)."""
from __future__ import annotations

from hymt.cli import main
from hymt.testing import write_tiny_checkpoint


def test_local_directory_prints_its_path(tmp_path, capsys):
    directory = write_tiny_checkpoint(tmp_path / "m", "Hy-MT2-1.8B")
    assert main(["download", str(directory)]) == 0
    assert capsys.readouterr().out.strip() == str(directory.resolve())


def test_offline_hub_id_fails_with_a_local_path_hint(monkeypatch, capsys):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert main(["download", "hymt-tests/No-Such-Model", "--revision", "main"]) == 2
    err = capsys.readouterr().err
    assert "hymt-tests/No-Such-Model" in err and "--model /path/to/No-Such-Model" in err
