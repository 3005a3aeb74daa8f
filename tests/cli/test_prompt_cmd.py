from hymt.cli import main


def run(capsys, *argv):
    code = main(["prompt", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_default_family_and_template(capsys):
    code, out, _ = run(capsys, "Hello", "--to", "zh")
    assert code == 0
    assert out == (
        "<｜hy_begin▁of▁sentence｜><｜hy_User｜>将以下文本翻译为中文，注意只需要输出翻译后的结果，不要额外解释：\n\n"
        "Hello<｜hy_place▁holder▁no▁8｜>\n"
    )


def test_glossary_implies_terminology(capsys):
    code, out, _ = run(capsys, "AI rocks", "--to", "German", "--from", "en", "--family", "Hy-MT2-7B",
                       "--glossary", "AI=KI", "--glossary", "rocks=rockt")
    assert code == 0
    assert out == (
        "<|startoftext|>Reference the following translations:\nAI translates to KI\nrocks translates to rockt\n\n"
        "Translate the following text into German. Note that you must ONLY output the translated result "
        "without any additional explanation:\n\nAI rocks<|extra_0|>\n"
    )


def test_explicit_template_and_style(capsys):
    code, out, _ = run(capsys, "Hi", "--to", "zh", "--family", "hy-mt2-1.8b", "--template", "style", "--style", "正式")
    assert code == 0
    assert out == (
        "<｜hy_begin▁of▁sentence｜><｜hy_User｜>请将以下文本翻译为中文。\n注意翻译的风格要严格符合【正式】\n\nHi"
        "<｜hy_Assistant｜>\n"
    )


def test_errors_exit_2_with_a_message(capsys):
    code, _, err = run(capsys, "Hi", "--to", "sv")
    assert code == 2 and "sv" in err and "zh-Hant" in err
    code, _, err = run(capsys, "Hi", "--to", "de", "--family", "Hunyuan-MT-7B", "--style", "formal")
    assert code == 2 and "Hunyuan-MT-7B" in err and "style" in err
    code, _, err = run(capsys, "Hi", "--to", "de", "--glossary", "AI")
    assert code == 2 and "SRC=TGT" in err
    code, _, err = run(capsys, "Hi", "--to", "de", "--glossary", "a=b", "--context", "c")
    assert code == 2 and "--template" in err
    code, _, err = run(capsys, "Hi", "--to", "de", "--ids")
    assert code == 2 and "--model" in err


def test_model_renders_with_its_template_and_prints_ids(capsys, tmp_path):
    import json

    from hymt.checkpoint import load_checkpoint
    from hymt.testing import write_tiny_checkpoint

    directory = write_tiny_checkpoint(tmp_path / "Hy-MT2-1.8B", "Hy-MT2-1.8B")
    code, out, _ = run(capsys, "Hello", "--to", "de", "--model", str(directory), "--ids")
    assert code == 0
    text, ids_line = out.rstrip("\n").rsplit("\n", 1)
    assert text == (
        "<｜hy_begin▁of▁sentence｜><｜hy_User｜>Translate the following text into German. Note that you should only "
        "output the translated result without any additional explanation:\n\nHello<｜hy_Assistant｜>"
    )
    assert json.loads(ids_line) == load_checkpoint(directory).encode(text)
