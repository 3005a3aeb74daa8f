"""`hymt make-test-model`."""
from __future__ import annotations

import os
import stat

import pytest

from hymt.checkpoint import load_checkpoint
from hymt.cli import main


def test_writes_a_loadable_checkpoint(tmp_path, capsys):
    target = tmp_path / "m"
    argv = ["make-test-model", str(target), "--family", "hunyuan-mt-chimera-7b", "--shards", "2", "--seed", "4"]
    assert main(argv) == 0
    assert capsys.readouterr().out.strip() == str(target)
    assert (target / "model.safetensors.index.json").is_file()
    assert load_checkpoint(target).special_tokens["<|extra_0|>"] >= 0


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o027, 0o640)])
def test_files_get_the_same_mode_and_the_next_step_is_printed(hymt_cli, tmp_path, umask, mode):
    target = tmp_path / "tiny"
    result = hymt_cli.run("make-test-model", str(target), "--shards", "2", preexec_fn=lambda: os.umask(umask))
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"{target}\n", "stdout: the directory alone, for scripts"
    assert f"hymt serve --model {target}" in result.stderr and f"--to de --model {target}" in result.stderr
    modes = {path.name: stat.S_IMODE(path.stat().st_mode) for path in target.iterdir()}
    assert "model-00001-of-00002.safetensors" in modes and "config.json" in modes
    assert set(modes.values()) == {mode}, modes


def test_quiet_prints_the_directory_only(hymt_cli, tmp_path):
    quiet = hymt_cli.run("make-test-model", str(tmp_path / "quiet"), "-q")
    assert quiet.returncode == 0 and quiet.stdout == f"{tmp_path / 'quiet'}\n" and quiet.stderr == ""


def test_unknown_family_is_an_error(tmp_path, capsys):
    assert main(["make-test-model", str(tmp_path / "m"), "--family", "gpt-2"]) == 2
    assert "HY-MT1.5-1.8B" in capsys.readouterr().err
    assert not (tmp_path / "m").exists()


def test_real_shape_writes_the_full_vocabulary_with_a_progress_bar(tmp_path, capsys):
    import json

    target = tmp_path / "real"
    args = ["make-test-model", str(target), "--family", "Hy-MT2-7B", "--real-shape", "--num-layers", "1",
            "--hidden-size", "16"]
    assert main(args) == 0
    out, err = capsys.readouterr()
    assert out.strip() == str(target)
    assert "writing shards" in err and "100%" in err
    config = json.loads((target / "config.json").read_text())
    assert config["vocab_size"] == 128167 and config["num_hidden_layers"] == 1 and config["hidden_size"] == 16
    index = json.loads((target / "model.safetensors.index.json").read_text())
    assert "model.layers.0.mlp.down_proj.weight" in index["weight_map"]
    ckpt = load_checkpoint(target)
    assert ckpt.tokenizer.get_vocab_size() == 128167
    assert ckpt.special_tokens["<|extra_0|>"] == 127962 and ckpt.eos_token_ids == (127960, 127957)


def test_real_shape_flag_conflicts(tmp_path, capsys):
    assert main(["make-test-model", str(tmp_path / "a"), "--real-shape", "--shards", "3"]) == 2
    assert "--shards" in capsys.readouterr().err
    assert main(["make-test-model", str(tmp_path / "b"), "--num-layers", "2"]) == 2
    assert "--real-shape" in capsys.readouterr().err
    assert main(["make-test-model", str(tmp_path / "c"), "--real-shape", "--hidden-size", "0"]) == 2
    assert "hidden_size" in capsys.readouterr().err
    assert not any((tmp_path / name).exists() for name in "abc")


def test_writes_a_pre_quantized_checkpoint_the_engine_loads(tmp_path, capsys):
    import json

    from hymt.engine.loader import load_model
    from hymt.engine.quant import IntWeightLinear

    target = tmp_path / "gptq"
    assert main(["make-test-model", str(target), "--quantization", "gptq-int4"]) == 0
    assert json.loads((target / "config.json").read_text())["quantization_config"]["quant_method"] == "gptq"
    model = load_model(target, "cpu")
    assert isinstance(model.layers[0].mlp.down_proj, IntWeightLinear) and model.quantization == "int4"
