"""`hymt translate FILE` for the document formats: the same kind of file back (DOCX beside the
input, SRT on stdout), a progress bar that stays, arguments checked before the model loads,
and a run that failed halfway resumed by the next one without asking the model again."""
from __future__ import annotations

import io
import json

import docx
import pytest

from hymt.cli import main
from hymt.errors import EngineError
from hymt.testing import ScriptedEngine, source_of

SRT = ("1\n00:00:01,000 --> 00:00:02,500\nHello there.\n\n"
       "2\n00:00:03,000 --> 00:00:05,000\nHow are you today?\n")


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    from hymt.testing import write_tiny_checkpoint

    return str(write_tiny_checkpoint(tmp_path_factory.mktemp("cli-files") / "HY-MT1.5-1.8B", "HY-MT1.5-1.8B"))


@pytest.fixture(autouse=True)
def _private_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("HYMT_CACHE_DIR", str(tmp_path / "cache"))


def _docx(path, paragraphs):
    document = docx.Document()
    for text in paragraphs:
        document.add_paragraph(text)
    document.save(path)


def _paragraphs(path):
    return [p.text for p in docx.Document(path).paragraphs]


def test_a_docx_comes_back_beside_the_input_with_a_bar_that_stays(tiny_model, hymt_cli, tmp_path):
    _docx(tmp_path / "letter.docx", ["Dear Anna, thank you for the flowers.", "See you on Sunday."])
    run = hymt_cli.run("translate", "letter.docx", "--to", "de", "--from", "en", "--model", tiny_model,
                       "--no-retry", cwd=tmp_path, env={"HYMT_CACHE_DIR": str(tmp_path / "cache")})
    assert run.returncode == 0, run.stderr
    assert run.stdout == ""
    translated = _paragraphs(tmp_path / "letter.de.docx")
    assert len(translated) == 2 and all(translated)
    assert "hymt: wrote letter.de.docx" in run.stderr
    final = next(line for line in run.stderr.replace("\r", "\n").splitlines()[::-1] if line.startswith("letter.docx"))
    assert final.startswith("letter.docx: 100%") and "2/2" in final and "seg" in final, final
    assert not list((tmp_path / "cache" / "resume").iterdir()), "the resume log is deleted after success"


def test_an_srt_goes_to_stdout_with_its_timings(tiny_model, hymt_cli, tmp_path):
    (tmp_path / "clip.srt").write_text(SRT, encoding="utf-8")
    run = hymt_cli.run("translate", "clip.srt", "--to", "fr", "--from", "en", "--model", tiny_model, "--no-retry",
                       "-q", cwd=tmp_path, env={"HYMT_CACHE_DIR": str(tmp_path / "cache")})
    assert run.returncode == 0, run.stderr
    timings = [line for line in run.stdout.splitlines() if "-->" in line]
    assert timings == ["00:00:01,000 --> 00:00:02,500", "00:00:03,000 --> 00:00:05,000"]
    assert run.stdout.startswith("1\n00:00:01,000") and run.stderr == ""


def test_json_summary_and_output_path(tiny_model, tmp_path, capsys):
    _docx(tmp_path / "a.docx", ["Short note."])
    out = tmp_path / "out" / "b.docx"
    out.parent.mkdir()
    assert main(["translate", str(tmp_path / "a.docx"), "--to", "ja", "--model", tiny_model, "--device", "cpu",
                 "-o", str(out), "--json", "--no-retry"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["output"] == str(out) and summary["format"] == "docx" and summary["target"] == "ja"
    assert summary["translated_segments"] == 1 and summary["segments"][0]["source"] == "Short note."
    assert len(_paragraphs(out)) == 1


@pytest.mark.parametrize(("argv", "stdin", "message"), [
    (["report.docx", "--to", "de"], "", "no such file: report.docx"),
    (["slides.PPTX", "--to", "de"], "", "no such file: slides.PPTX"),
    (["-", "--format", "docx", "--to", "de"], "x", "a docx document read from stdin needs -o OUT"),
    (["-", "--format", "rtf", "--to", "de"], "x", "unknown format 'rtf'; valid: text, markdown, html, docx"),
    (["Hello", "--format", "docx", "--to", "de"], "", "--format docx translates a file"),
    (["here.docx", "--to", "de", "-o", "here.docx"], "", "would overwrite its input"),
])
def test_arguments_are_checked_before_the_model_loads(hymt_cli, tmp_path, argv, stdin, message):
    _docx(tmp_path / "here.docx", ["Hi."])
    result = hymt_cli.run("translate", *argv, "--model", str(tmp_path / "no-model"), stdin=stdin, cwd=tmp_path)
    assert result.returncode == 2
    assert message in result.stderr and "no-model" not in result.stderr, result.stderr


class FailsAfter(ScriptedEngine):
    """Answers in upper case, one token a step; the step after `steps` fails everything in
    flight, as a crash of the device would."""

    def __init__(self, checkpoint, steps: int | None) -> None:
        super().__init__(checkpoint, self.upper_long)
        self.steps_left = steps

    @staticmethod
    def upper_long(user_turn, params):
        source = source_of(user_turn)
        return source.upper() * (1 if len(source) < 10 else 9)  # long sources: long answers

    def step(self):
        if self.steps_left is not None:
            if self.steps_left <= 0 and self.has_unfinished():
                raise EngineError("the device fell over")
            self.steps_left -= 1
        return super().step()


def test_a_failed_run_resumes_without_asking_the_model_again(tiny_model, tmp_path, monkeypatch, capsys):
    from hymt.checkpoint import load_checkpoint
    from hymt.cli import translate_cmd
    from hymt.translate import Translator

    checkpoint = load_checkpoint(tiny_model)
    engines: list[FailsAfter] = []

    def open_translator(steps):
        def make(args):
            engines.append(FailsAfter(checkpoint, steps))
            return Translator(tiny_model, engine=engines[-1], cache=False)
        return make

    paragraphs = ["One.", "Two.", "A much longer third paragraph, answered at length by this engine."]
    _docx(tmp_path / "doc.docx", paragraphs)
    argv = ["translate", str(tmp_path / "doc.docx"), "--to", "de", "--from", "en", "--model", tiny_model,
            "--no-retry", "--no-progress"]
    monkeypatch.setattr(translate_cmd, "open_translator", open_translator(steps=40))
    assert main(argv) == 2
    assert "the device fell over" in capsys.readouterr().err
    assert not (tmp_path / "doc.de.docx").exists()
    logs = list((tmp_path / "cache" / "resume").iterdir())
    assert len(logs) == 1 and len(logs[0].read_text().splitlines()) == 2  # the two short answers

    monkeypatch.setattr(translate_cmd, "open_translator", open_translator(steps=None))
    assert main(argv) == 0
    assert "resuming doc.docx: 2 answers kept from an interrupted run" in capsys.readouterr().err
    asked = [user for user, _ in engines[-1].prompts]
    assert len(asked) == 1 and "third paragraph" in asked[0]
    assert _paragraphs(tmp_path / "doc.de.docx")[:2] == ["ONE.", "TWO."]
    assert not logs[0].exists()


def test_stdin_takes_a_text_document_format(tiny_model, monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(SRT.encode("utf-8"))))
    assert main(["translate", "-", "--format", "srt", "--to", "de", "--from", "en", "--model", tiny_model,
                 "--no-retry", "-q"]) == 0
    out = capsys.readouterr().out
    assert "00:00:03,000 --> 00:00:05,000" in out
