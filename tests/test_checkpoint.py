"""Checkpoint resolution and loading (hymt/checkpoint.py)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from hymt.checkpoint import Checkpoint, load_checkpoint, resolve_model_dir
from hymt.errors import ModelLoadError
from hymt.testing import write_tiny_checkpoint

B, U, A = "<｜hy_begin▁of▁sentence｜>", "<｜hy_User｜>", "<｜hy_Assistant｜>"


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return write_tiny_checkpoint(tmp_path_factory.mktemp("ckpt") / "Hy-MT2-1.8B", "Hy-MT2-1.8B")


def test_existing_directory_resolves_to_itself(tiny_dir):
    assert resolve_model_dir(str(tiny_dir)) == tiny_dir.resolve()


@pytest.mark.parametrize("name", ["/no/such/dir", "./missing", "not-a-hub-id", "a/b/c"])
def test_missing_local_path_is_a_clear_error(name):
    with pytest.raises(ModelLoadError, match="local checkpoint directory"):
        resolve_model_dir(name)


def test_a_file_is_not_a_checkpoint(tmp_path):
    file = tmp_path / "x"
    file.write_text("")
    with pytest.raises(ModelLoadError):
        resolve_model_dir(str(file))


def test_hub_id_offline_suggests_a_local_path(monkeypatch):
    # An id no cache holds: huggingface_hub reads its cache location at import, not from env.
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelLoadError) as info:
        resolve_model_dir("hymt-tests/No-Such-Model")
    message = str(info.value)
    assert "'hymt-tests/No-Such-Model'" in message and "--model /path/to/No-Such-Model" in message


def test_load_reads_every_file(tiny_dir):
    ckpt = load_checkpoint(tiny_dir)
    assert isinstance(ckpt, Checkpoint) and ckpt.path == tiny_dir.resolve()
    assert ckpt.config["model_type"] == "hunyuan_v1_dense"
    assert ckpt.chat_template == (tiny_dir / "chat_template.jinja").read_text(encoding="utf-8")
    assert ckpt.eos_token_ids == (ckpt.special_tokens["<｜hy_place▁holder▁no▁2｜>"],)
    assert load_checkpoint(ckpt) is ckpt


def test_encode_maps_special_text_and_adds_nothing(tiny_dir):
    ckpt = load_checkpoint(tiny_dir)
    prompt = f"{B}{U}Translate into English: 你好{A}"
    ids = ckpt.encode(prompt)
    assert ids[0] == ckpt.bos_token_id and ids[-1] == ckpt.special_tokens[A]
    assert ids.count(ckpt.special_tokens[U]) == 1
    assert ckpt.encode("hi")[0] != ckpt.bos_token_id
    assert ckpt.decode(ids) == "Translate into English: 你好"
    assert ckpt.decode(ids, skip_special_tokens=False) == prompt


def test_eos_falls_back_to_config_and_int_is_accepted(tmp_path):
    directory = write_tiny_checkpoint(tmp_path, "Hunyuan-MT-7B")
    (directory / "generation_config.json").unlink()
    ckpt = load_checkpoint(directory)
    assert ckpt.generation_config == {}
    assert ckpt.eos_token_ids == (ckpt.special_tokens["<|eos|>"],)
    (directory / "generation_config.json").write_text(json.dumps({"eos_token_id": 7}))
    assert load_checkpoint(directory).eos_token_ids == (7,)


def test_chat_template_from_tokenizer_config(tmp_path):
    directory = write_tiny_checkpoint(tmp_path, "HY-MT1.5-7B")
    (directory / "chat_template.jinja").unlink()
    config = json.loads((directory / "tokenizer_config.json").read_text())
    (directory / "tokenizer_config.json").write_text(json.dumps(config | {"chat_template": "{{ x }}"}))
    assert load_checkpoint(directory).chat_template == "{{ x }}"
    (directory / "tokenizer_config.json").unlink()
    ckpt = load_checkpoint(directory)
    assert ckpt.chat_template is None and ckpt.tokenizer_config == {}


@pytest.mark.parametrize(("broken", "match"), [
    ("config.json", "config.json is missing"), ("tokenizer.json", "no tokenizer.json"),
])
def test_missing_required_files(tmp_path, broken, match):
    directory = write_tiny_checkpoint(tmp_path, "Hy-MT2-7B")
    (directory / broken).unlink()
    with pytest.raises(ModelLoadError, match=match):
        load_checkpoint(directory)


def test_invalid_json_names_the_file(tmp_path):
    directory = write_tiny_checkpoint(tmp_path, "Hy-MT2-7B")
    (directory / "config.json").write_text("{not json")
    with pytest.raises(ModelLoadError, match="config.json is not valid JSON"):
        load_checkpoint(directory)


def test_import_is_light():
    code = "import sys, hymt.checkpoint; print('transformers' in sys.modules, 'torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
