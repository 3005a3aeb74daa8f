"""translate_corpus through the local loop over a scripted engine: input order, resume after
an interruption, and what it refuses."""
from __future__ import annotations

import json

import pytest

from hymt.errors import InvalidInputError
from hymt.scale.corpus_batch import CorpusRequest
from hymt.scale.corpus_io import CorpusColumns
from hymt.scale.corpus_local import LocalRunner
from hymt.scale.corpus_run import CorpusJob, translate_corpus
from hymt.scale.corpus_work import work_path
from hymt.translate.options import TranslateOptions
from tests.scale.scripted_translator import ScriptedTranslatorFactory

REQUEST = CorpusRequest("de", "en", TranslateOptions(use_cache=False))


class Interrupted(KeyboardInterrupt):
    pass


class Recording:
    """A runner around another that records the rows it was given, and can stop after n batches."""

    def __init__(self, inner, stop_after: int | None = None):
        self.inner, self.stop_after, self.seen = inner, stop_after, []

    def batches(self, rows, batch_size):
        self.seen.extend(row.text for row in rows)
        for n, batch in enumerate(self.inner.batches(rows, batch_size)):
            if n == self.stop_after:
                raise Interrupted
            yield batch


@pytest.fixture
def factory(tiny_model_dir):
    return ScriptedTranslatorFactory(tiny_model_dir)


def _lines(n: int) -> list[str]:
    return [f"Sentence {i} of the corpus." if i % 7 else "" for i in range(n)]


def _job(tmp_path, lines, **changes) -> CorpusJob:
    source = tmp_path / "in.txt"
    if not source.exists():
        source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    values = dict(input=source, output=tmp_path / "out.txt", input_format="text", output_format="text",
                  request=REQUEST, translator="tiny", batch_size=16)
    return CorpusJob(**{**values, **changes})


def test_rows_come_out_in_input_order_blank_rows_blank(tmp_path, factory):
    lines = _lines(100)
    summary = translate_corpus(_job(tmp_path, lines), LocalRunner(factory, REQUEST))
    assert (summary.rows, summary.resumed) == (100, 0)
    assert (tmp_path / "out.txt").read_text(encoding="utf-8").splitlines() == [
        f"[{line.upper()}]" if line else "" for line in lines]
    assert not work_path(tmp_path / "out.txt").exists()


def test_an_interrupted_run_resumes_where_it_stopped(tmp_path, factory):
    lines = _lines(120)
    first = Recording(LocalRunner(factory, REQUEST), stop_after=3)
    with pytest.raises(Interrupted):
        translate_corpus(_job(tmp_path, lines), first)
    work = work_path(tmp_path / "out.txt")
    assert work.exists() and not (tmp_path / "out.txt").exists()
    kept = len(work.read_text(encoding="utf-8").splitlines()) - 1
    assert kept >= 3 * 16
    with work.open("a", encoding="utf-8") as torn:  # the interruption cut a line in half
        torn.write('{"t": "half a li')
    second = Recording(LocalRunner(factory, REQUEST))
    summary = translate_corpus(_job(tmp_path, lines), second)
    assert summary.resumed == kept and second.seen == lines[kept:]
    assert (tmp_path / "out.txt").read_text(encoding="utf-8").splitlines() == [
        f"[{line.upper()}]" if line else "" for line in lines]
    assert not work.exists()


def test_a_work_file_of_other_options_or_an_existing_output_is_refused(tmp_path, factory):
    lines = _lines(40)
    with pytest.raises(Interrupted):
        translate_corpus(_job(tmp_path, lines), Recording(LocalRunner(factory, REQUEST), stop_after=1))
    french = CorpusRequest("fr", "en", REQUEST.options)
    with pytest.raises(InvalidInputError, match="other input, columns, languages or options") as err:
        translate_corpus(_job(tmp_path, lines, request=french), LocalRunner(factory, french))
    assert err.value.field == "output"
    translate_corpus(_job(tmp_path, lines, request=french), LocalRunner(factory, french), overwrite=True)
    with pytest.raises(InvalidInputError, match="already exists; --overwrite replaces it"):
        translate_corpus(_job(tmp_path, lines), LocalRunner(factory, REQUEST))


def test_ids_and_per_row_source_languages_are_kept(tmp_path, factory):
    source = tmp_path / "in.jsonl"
    rows = [{"id": f"r{i}", "text": f"Row {i}.", "lang": "fr" if i % 2 else "es"} for i in range(10)]
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    request = CorpusRequest("de", "auto", REQUEST.options)
    job = CorpusJob(source, tmp_path / "out.jsonl", "jsonl", "jsonl", request, "tiny",
                    CorpusColumns(id="id", source="lang"), batch_size=4)
    translate_corpus(job, LocalRunner(factory, request))
    out = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(o["id"], o["text"], o["source_lang"], o["translation"]) for o in out] == [
        (r["id"], r["text"], r["lang"], f"[{r['text'].upper()}]") for r in rows]
