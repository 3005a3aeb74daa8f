import pytest

from hymt.errors import InvalidInputError
from hymt.models import FAMILIES, get_family

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
    from hymt.models import PromptSpec, build_prompt

    family = get_family("Hunyuan-MT-7B")
    user = build_prompt(family, PromptSpec("Get something off your chest", target="zh", source="en"))
    assert family.render_chat(user) == (
        "<|startoftext|>把下面的文本翻译成中文，不要额外解释。\n\nGet something off your chest<|extra_0|>"
    )
