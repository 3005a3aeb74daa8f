import pytest

from hymt.errors import ModelLoadError
from hymt.families.chat_format import ChatFormat, render_jinja, special_tokens

# A template in the style of the official ones: block tags on their own lines, which only
# render cleanly with trim_blocks + lstrip_blocks (as transformers compiles them).
TEMPLATE = """{{ bos_token }}{% for message in messages %}
    {% if message['role'] == 'user' %}
<｜hy_User｜>{{ message['content'] }}
    {%- endif %}
{% endfor %}
{% if add_generation_prompt %}
<｜hy_Assistant｜>
{%- else %}
<｜hy_place▁holder▁no▁8｜>
{%- endif %}
"""


def test_chat_format_wraps_the_user_turn():
    assert ChatFormat("<a>", "<b>").render("text") == "<a>text<b>"


def test_jinja_trims_blocks_like_transformers():
    tokens = {"bos_token": "<｜hy_begin▁of▁sentence｜>"}
    assert render_jinja(TEMPLATE, "Hi\n", add_generation_prompt=True, tokens=tokens) == (
        "<｜hy_begin▁of▁sentence｜><｜hy_User｜>Hi\n<｜hy_Assistant｜>"
    )
    assert render_jinja(TEMPLATE, "Hi", add_generation_prompt=False, tokens=tokens) == (
        "<｜hy_begin▁of▁sentence｜><｜hy_User｜>Hi<｜hy_place▁holder▁no▁8｜>"
    )


def test_generation_tag_loopcontrols_and_tojson():
    template = (
        "{% for m in messages %}{% if loop.index > 1 %}{% break %}{% endif %}"
        "{% generation %}{{ m | tojson }}{% endgeneration %}{% endfor %}"
    )
    rendered = render_jinja(template, "中文", add_generation_prompt=False, tokens={})
    assert rendered == '{"role": "user", "content": "中文"}'


def test_raise_exception_and_syntax_errors_become_model_load_errors():
    with pytest.raises(ModelLoadError, match="no system"):
        render_jinja("{{ raise_exception('no system') }}", "x", add_generation_prompt=False, tokens={})
    with pytest.raises(ModelLoadError):
        render_jinja("{% if %}", "x", add_generation_prompt=False, tokens={})


def test_sandbox_blocks_attribute_escape():
    with pytest.raises(ModelLoadError, match="unsafe"):
        render_jinja("{{ ''.__class__.__mro__[1].__subclasses__() }}", "x", add_generation_prompt=False,
                     tokens={})


def test_special_tokens_from_tokenizer_config():
    config = {
        "bos_token": "<|startoftext|>",
        "eos_token": {"content": "<|eos|>", "lstrip": False},
        "pad_token": None,
        "model_max_length": 1000,
        "additional_special_tokens": ["<|extra_0|>", {"content": "<|extra_4|>"}],
    }
    assert special_tokens(config) == {
        "bos_token": "<|startoftext|>",
        "eos_token": "<|eos|>",
        "additional_special_tokens": ["<|extra_0|>", "<|extra_4|>"],
    }
