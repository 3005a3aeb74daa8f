"""translate_corpus: a corpus file in, its translation out, in input order, resumable.

    rows  = read_corpus(input)                 every row, in file order
    work  = CorpusWork.open(output, key)       what an earlier, interrupted run translated
    for batch in runner.batches(rows[len(work.done):], batch_size):   local loop or Ray Data
        work.append(batch)                     on disk as it comes, in order
    write_corpus(output, rows, work.done); work.remove()

The runner decides where the engines are; this module only feeds rows and records answers,
so every runner writes the same file.
"""
from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol

from hymt.errors import InvalidInputError
from hymt.scale.corpus_batch import CorpusRequest
from hymt.scale.corpus_io import CorpusColumns, CorpusRow, RowTranslation, read_corpus, write_corpus
from hymt.scale.corpus_work import CorpusWork, work_path
from hymt.translate.progress import ProgressBar

DEFAULT_BATCH_SIZE = 256


class CorpusRunner(Protocol):
    """Where the engines run (LocalRunner, RayRunner)."""

    def batches(self, rows: Sequence[CorpusRow], batch_size: int) -> Iterator[list[RowTranslation]]: ...


@dataclass(frozen=True)
class CorpusJob:
    """One corpus translation.

    Attributes:
        input / output: the files; their formats (CORPUS_FORMATS) are given.
        columns: the text, id and source-language columns; header: CSV/TSV with a header row.
        request: target and source languages, TranslateOptions.
        translator: what translates (the TranslatorSpec's repr: model, quantization, answer
            cap, ...), part of the resume key.
        batch_size: rows per Translator.translate_batch call.
    """

    input: Path
    output: Path
    input_format: str
    output_format: str
    request: CorpusRequest
    translator: str
    columns: CorpusColumns = CorpusColumns()
    header: bool = True
    batch_size: int = DEFAULT_BATCH_SIZE

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise InvalidInputError(f"batch_size must be >= 1, got {self.batch_size}", field="batch_size")

    def resume_key(self) -> str:
        """What makes a run's rows reusable by another: the input file as it is now and
        everything that shapes a translation."""
        stat = self.input.stat()
        facts = [str(self.input.resolve()), stat.st_size, stat.st_mtime_ns, self.input_format, self.header,
                 asdict(self.columns), self.request.target, self.request.source, self.request.options.to_dict(),
                 self.translator]
        return hashlib.sha256(json.dumps(facts, sort_keys=True, default=str).encode()).hexdigest()


@dataclass(frozen=True)
class CorpusSummary:
    """How a run went: rows in the corpus, rows taken from an earlier run, seconds."""

    rows: int
    resumed: int
    elapsed_s: float
    output: Path


def translate_corpus(job: CorpusJob, runner: CorpusRunner, *, progress: ProgressBar | None = None,
                     overwrite: bool = False) -> CorpusSummary:
    """Translate `job.input` into `job.output`. An interrupted run leaves a work file beside
    the output; running the same job again goes on from there. An output already there
    (and no work file) is an error unless `overwrite`."""
    started = time.perf_counter()
    if overwrite:
        work_path(job.output).unlink(missing_ok=True)
    elif job.output.exists() and not work_path(job.output).exists():
        raise InvalidInputError(f"{job.output} already exists; --overwrite replaces it", field="output")
    rows = read_corpus(job.input, job.input_format, job.columns, header=job.header)
    work = CorpusWork.open(job.output, job.resume_key())
    try:
        resumed = len(work.done)
        if resumed > len(rows):
            raise InvalidInputError(f"{work.path} holds more rows than {job.input}; --overwrite starts over",
                                    field="output")
        if progress is not None:
            progress.total = len(rows)
            progress.update(resumed)
        for batch in runner.batches(rows[resumed:], job.batch_size):
            work.append(batch)
            if progress is not None:
                progress.update(len(batch))
        if len(work.done) != len(rows):
            raise RuntimeError(f"the runner translated {len(work.done)} of {len(rows)} rows")
        write_corpus(job.output, job.output_format, rows, work.done, job.columns)
    except BaseException:
        work.close()  # kept for the next run
        raise
    work.remove()
    return CorpusSummary(len(rows), resumed, time.perf_counter() - started, job.output)
