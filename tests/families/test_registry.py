import json
import logging

import pytest

from hymt.errors import InvalidInputError, ModelLoadError
from hymt.families import FAMILIES, PromptSpec, build_prompt, detect_family, get_family

NAMES = ("HY-MT1.5-1.8B", "HY-MT1.5-7B", "Hunyuan-MT-7B", "Hunyuan-MT-Chimera-7B", "Hy-MT2-1.8B", "Hy-MT2-7B")


def test_the_six_families():
    assert tuple(f.name for f in FAMILIES) == NAMES
    assert {f.name: (f.generation, f.size) for f in FAMILIES} == {
        "HY-MT1.5-1.8B": ("hy-mt1.5", "1.8B"),
        "HY-MT1.5-7B": ("hy-mt1.5", "7B"),
        "Hunyuan-MT-7B": ("hunyuan-mt", "7B"),
        "Hunyuan-MT-Chimera-7B": ("chimera", "7B"),
        "Hy-MT2-1.8B": ("hy-mt2", "1.8B"),
        "Hy-MT2-7B": ("hy-mt2", "7B"),
    }


@pytest.mark.parametrize(
    "name, expected",
    [("hy-mt1.5-1.8b", "HY-MT1.5-1.8B"), ("tencent/HY-MT1.5-7B", "HY-MT1.5-7B"), ("HY_MT2_7B", "Hy-MT2-7B"),
     ("HUNYUAN-MT-CHIMERA-7B", "Hunyuan-MT-Chimera-7B"), ("tencent/hunyuan-mt-7b", "Hunyuan-MT-7B")],
)
def test_get_family_case_insensitive_and_hub_ids(name, expected):
    assert get_family(name).name == expected


def test_unknown_family_lists_the_valid_ones():
    with pytest.raises(InvalidInputError) as info:
        get_family("Hy-MT3-7B")
    assert info.value.field == "family"
    assert all(name in str(info.value) for name in NAMES)


def test_templates_per_family():
    templates = {f.name: f.templates for f in FAMILIES}
    assert templates["Hunyuan-MT-7B"] == {"default"}
    assert templates["Hunyuan-MT-Chimera-7B"] == {"default", "fusion"}
    assert templates["HY-MT1.5-1.8B"] == templates["HY-MT1.5-7B"] == {"default", "terminology", "context", "formatted"}
    assert templates["Hy-MT2-1.8B"] == templates["Hy-MT2-7B"] == {
        "default", "terminology", "context", "style", "personalization", "delimiters", "structured"
    }
    assert get_family("Hy-MT2-7B").supports("background")
    assert not get_family("HY-MT1.5-7B").supports("style")


def test_official_sampling_defaults():
    for family in FAMILIES:
        params = family.default_sampling
        assert (params.temperature, params.top_p, params.top_k, params.repetition_penalty) == (0.7, 0.6, 20, 1.05)
        assert params.max_tokens == (4096 if family.generation == "hy-mt2" else 2048)
        assert not params.greedy


def test_generation_prompt_follows_the_readmes():
    assert {f.name for f in FAMILIES if f.add_generation_prompt} == {"Hy-MT2-1.8B", "Hy-MT2-7B"}


@pytest.mark.parametrize(
    "name, expected",
    [
        ("HY-MT1.5-1.8B", "<｜hy_begin▁of▁sentence｜><｜hy_User｜>Hello<｜hy_place▁holder▁no▁8｜>"),
        ("Hy-MT2-1.8B", "<｜hy_begin▁of▁sentence｜><｜hy_User｜>Hello<｜hy_Assistant｜>"),
        ("HY-MT1.5-7B", "<|startoftext|>Hello<|extra_0|>"),
        ("Hunyuan-MT-7B", "<|startoftext|>Hello<|extra_0|>"),
        ("Hunyuan-MT-Chimera-7B", "<|startoftext|>Hello<|extra_0|>"),
        ("Hy-MT2-7B", "<|startoftext|>Hello<|extra_0|>"),
    ],
)
def test_built_in_chat_formats(name, expected):
    assert get_family(name).render_chat("Hello") == expected


def test_full_model_input_prompt_then_chat_format():
    family = get_family("Hunyuan-MT-7B")
    user = build_prompt(family, PromptSpec("Get something off your chest", target="zh", source="en"))
    assert family.render_chat(user) == (
        "<|startoftext|>把下面的文本翻译成中文，不要额外解释。\n\nGet something off your chest<|extra_0|>"
    )


# Detection on tiny checkpoints ------------------------------------------------------------------
def tiny(directory, family, *, name_or_path="", readme=None, **config_changes):
    """A tiny checkpoint whose only name hints are the ones a test chooses."""
    from hymt.checkpoint import load_checkpoint  # imported here so the
    from hymt.testing import write_tiny_checkpoint  # string-only tests above run without it

    write_tiny_checkpoint(directory, family)
    path = directory / "config.json"
    config = json.loads(path.read_text())
    config["_name_or_path"] = name_or_path
    config.update(config_changes)
    path.write_text(json.dumps(config))
    if readme is not None:
        (directory / "README.md").write_text(readme, encoding="utf-8")
    return load_checkpoint(directory)


@pytest.mark.parametrize("name", NAMES)
def test_detect_every_family_from_its_directory_name(name, tmp_path):
    assert detect_family(tiny(tmp_path / name, name)).name == name


@pytest.mark.parametrize("name", NAMES)
def test_detect_from_name_or_path(name, tmp_path):
    checkpoint = tiny(tmp_path / "checkpoint", name, name_or_path=f"/data/models/{name}")
    assert detect_family(checkpoint).name == name


def test_detect_from_hub_cache_folder(tmp_path):
    directory = tmp_path / "models--tencent--Hunyuan-MT-Chimera-7B" / "snapshots" / "0123abcd"
    assert detect_family(tiny(directory, "Hunyuan-MT-Chimera-7B")).name == "Hunyuan-MT-Chimera-7B"


def test_detect_from_model_card(tmp_path):
    card = "---\nlicense: other\n---\n# HY-MT1.5-1.8B\n\nUpgraded from Hunyuan-MT-7B; see also Hy-MT2.\n"
    checkpoint = tiny(tmp_path / "checkpoint", "HY-MT1.5-1.8B", readme=card)
    assert detect_family(checkpoint).name == "HY-MT1.5-1.8B"


def test_parent_folders_are_not_hints(tmp_path):
    checkpoint = tiny(tmp_path / "HY-MT1.5-experiments" / "checkpoint", "HY-MT1.5-7B")
    assert detect_family(checkpoint).name == "Hy-MT2-7B"


@pytest.mark.parametrize("family, newest", [("HY-MT1.5-1.8B", "Hy-MT2-1.8B"), ("Hunyuan-MT-7B", "Hy-MT2-7B")])
def test_unknown_generation_falls_back_to_the_newest_of_the_size_with_a_warning(family, newest, tmp_path, caplog):
    checkpoint = tiny(tmp_path / "checkpoint", family)
    with caplog.at_level(logging.WARNING, logger="hymt.families.registry"):
        assert detect_family(checkpoint).name == newest
    assert newest in caplog.text


def test_name_that_contradicts_the_size_falls_back(tmp_path, caplog):
    checkpoint = tiny(tmp_path / "Hunyuan-MT-7B-but-small", "HY-MT1.5-1.8B")
    with caplog.at_level(logging.WARNING, logger="hymt.families.registry"):
        assert detect_family(checkpoint).name == "Hy-MT2-1.8B"
    assert "hunyuan-mt" in caplog.text


def test_tokenizer_decides_the_size_over_the_config(tmp_path):
    checkpoint = tiny(tmp_path / "Hy-MT2-x", "Hy-MT2-1.8B", hidden_size=4096)
    assert detect_family(checkpoint).name == "Hy-MT2-1.8B"


def test_explicit_family_always_wins(tmp_path):
    checkpoint = tiny(tmp_path / "Hy-MT2-7B", "Hy-MT2-7B")
    assert detect_family(checkpoint, family="hunyuan-mt-chimera-7b").name == "Hunyuan-MT-Chimera-7B"


def test_hy_v3_is_refused_clearly(tmp_path):
    checkpoint = tiny(tmp_path / "Hy-MT2-30B-A3B", "Hy-MT2-1.8B", model_type="hy_v3")
    with pytest.raises(ModelLoadError, match="Hy-MT2-30B-A3B"):
        detect_family(checkpoint)
