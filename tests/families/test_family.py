"""ModelFamily against tiny checkpoints: jinja == built-in chat format, stop ids from the checkpoint."""
import json

import pytest

from hymt.families import FAMILIES, PromptSpec, build_prompt, get_family


def load_checkpoint(directory):
    from hymt.checkpoint import load_checkpoint as load

    return load(directory)


def write_tiny_checkpoint(directory, family):
    from hymt.testing import write_tiny_checkpoint as write

    return write(directory, family)


NAMES = [f.name for f in FAMILIES]


@pytest.fixture(scope="module")
def checkpoint_dirs(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny")
    return {name: write_tiny_checkpoint(root / name, name) for name in NAMES}


def _without_chat_template(directory):
    """The same checkpoint with every copy of its chat template removed."""
    (directory / "chat_template.jinja").unlink(missing_ok=True)
    config_path = directory / "tokenizer_config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config.pop("chat_template", None)
    config_path.write_text(json.dumps(config, ensure_ascii=False), encoding="utf-8")
    return load_checkpoint(directory)


@pytest.mark.parametrize("name", NAMES)
def test_built_in_format_equals_the_checkpoint_jinja(name, checkpoint_dirs):
    family = get_family(name)
    checkpoint = load_checkpoint(checkpoint_dirs[name])
    assert checkpoint.chat_template, "tiny checkpoints ship a chat template"
    for target, source in (("zh", "en"), ("de", "en"), ("en", None)):
        user = build_prompt(family, PromptSpec("Hello\n\n  world ", target=target, source=source))
        assert family.render_chat(user, checkpoint) == family.render_chat(user)


@pytest.mark.parametrize("name", NAMES)
def test_special_tokens_tokenize_as_single_ids(name, checkpoint_dirs):
    family = get_family(name)
    checkpoint = load_checkpoint(checkpoint_dirs[name])
    ids = checkpoint.encode(family.render_chat("Hello", checkpoint))
    tokenizer = checkpoint.tokenizer
    marker = {"1.8B": "<｜hy_User｜>", "7B": "<|extra_0|>"}[family.size]
    assert tokenizer.token_to_id(marker) in ids
    assert ids[0] == checkpoint.bos_token_id


@pytest.mark.parametrize("name", NAMES)
def test_without_a_template_the_built_in_format_is_used(name, checkpoint_dirs, tmp_path):
    family = get_family(name)
    directory = write_tiny_checkpoint(tmp_path / name, name)
    with_jinja = family.render_chat("Hi", load_checkpoint(directory))
    bare = _without_chat_template(directory)
    assert not bare.chat_template
    assert family.render_chat("Hi", bare) == with_jinja


@pytest.mark.parametrize("name", NAMES)
def test_stop_ids_come_from_the_checkpoint(name, checkpoint_dirs):
    family = get_family(name)
    checkpoint = load_checkpoint(checkpoint_dirs[name])
    stop = family.stop_token_ids(checkpoint)
    expected_token = {"1.8B": "<｜hy_place▁holder▁no▁2｜>", "7B": "<|eos|>"}[family.size]
    assert checkpoint.tokenizer.token_to_id(expected_token) in stop
    assert set(checkpoint.eos_token_ids) <= set(stop)
    assert len(stop) == len(set(stop))


def test_endoftext_is_a_7b_stop_id_only_when_generation_config_lists_it(tmp_path):
    family = get_family("Hunyuan-MT-7B")
    directory = write_tiny_checkpoint(tmp_path / "hmt", family.name)
    tokenizer = load_checkpoint(directory).tokenizer
    eos, endoftext = tokenizer.token_to_id("<|eos|>"), tokenizer.token_to_id("<|endoftext|>")
    assert None not in (eos, endoftext)
    path = directory / "generation_config.json"
    config = json.loads(path.read_text())
    for listed, expected in (([eos], (eos,)), ([eos, endoftext], (eos, endoftext))):
        config["eos_token_id"] = listed
        path.write_text(json.dumps(config))
        assert family.stop_token_ids(load_checkpoint(directory)) == expected


def test_stop_ids_follow_the_checkpoint_not_constants(tmp_path):
    # A family used on the other line's checkpoint still finds only ids that exist there.
    checkpoint = load_checkpoint(write_tiny_checkpoint(tmp_path / "small", "Hy-MT2-1.8B"))
    stop = get_family("Hy-MT2-7B").stop_token_ids(checkpoint)
    assert set(stop) == set(checkpoint.eos_token_ids)
