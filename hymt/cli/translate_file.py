"""`hymt translate FILE` for the document formats (hymt/documents/registry.py): the file comes
back in its own format, translated, with a progress bar over segments, and resumes where an
interrupted run stopped.

Where the translation goes: `-o OUT` when given; else a text format (SRT, VTT, ASS, PO,
XLIFF, JSON, YAML) goes to stdout, and a binary one (DOCX, PPTX, XLSX; a PDF comes back as
DOCX) to `<stem>.<lang><suffix>` next to the input, which stderr names. With --json the
translation is always written to a file (-o, else next to the input) and stdout gets the
summary: the output path, languages, token counts, issues and every segment.

Resume: every engine answer is appended to a log in the cache directory as it arrives
(resume_log.py), keyed by the file's bytes, the model and the options; the same command run
again reuses those answers and asks the model only for the rest. The log is deleted once the
translation is written.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from hymt.cli.resume_log import ResumeLog, resume_key, resume_path
from hymt.cli.verbosity import log_level
from hymt.documents.units import DocumentFormat
from hymt.errors import InvalidInputError
from hymt.languages import get_language
from hymt.translate.file_translation import DocumentTranslation, translated_name

if TYPE_CHECKING:
    from hymt.translate import Translator
    from hymt.translate.options import TranslateOptions


def output_path(args: argparse.Namespace, source: Path | None, fmt: DocumentFormat) -> Path | None:
    """Where the translation of `source` (None: stdin) goes (None: stdout); an error when that
    is the input, or when a binary document from stdin has no -o."""
    if args.output:
        output = Path(args.output).expanduser()
    elif fmt.text and not args.json:
        return None
    elif source is None:
        raise InvalidInputError(f"a {fmt.name} document read from stdin needs -o OUT", field="output")
    else:
        output = source.with_name(translated_name(source.name, fmt, get_language(args.target, field="to")))
    if source is not None and output.resolve() == source.resolve():
        raise InvalidInputError(f"the translation would overwrite its input {source}; choose another -o",
                                field="output")
    return output


def read_document(source: Path | None, fmt: DocumentFormat) -> tuple[bytes, str]:
    """(the document's bytes, its file name); `source` None reads stdin."""
    data = source.read_bytes() if source is not None else sys.stdin.buffer.read()
    if not data:
        raise InvalidInputError(f"nothing to translate: {source or 'stdin'} is empty", field="input")
    return data, source.name if source is not None else f"stdin{fmt.suffixes[0]}"


def translate_document_file(args: argparse.Namespace, source: Path | None, fmt: DocumentFormat,
                            translator: Translator, options: TranslateOptions) -> int:
    """Translate `source` (a file of `fmt`; None: stdin) with `translator`; returns the exit status."""
    data, name = read_document(source, fmt)
    output = output_path(args, source, fmt)
    shown = log_level(args) <= logging.WARNING
    log = ResumeLog(resume_path(resume_key(data, _resume_settings(args, fmt, translator, options))))
    if log.recovered and shown:
        print(f"hymt: resuming {name}: {log.recovered} answers kept from an interrupted run", file=sys.stderr)
    try:
        result = _translate(args, translator, data, name, fmt, options, log, shown and not args.no_progress)
    except KeyboardInterrupt:
        if shown:
            print(f"\nhymt: interrupted; {len(log.answers)} answers are kept: run the same command again to resume",
                  file=sys.stderr)
        raise
    finally:
        log.close()
    if output is None:
        sys.stdout.flush()
        sys.stdout.buffer.write(result.data)
        sys.stdout.buffer.flush()
    else:
        _write_atomically(output, result.data)
    log.remove()
    if args.json:
        sys.stdout.write(json.dumps(summary(result, output), ensure_ascii=False, indent=2) + "\n")
    elif shown:
        from hymt.cli.issue_report import segment_issue_report

        report = segment_issue_report(result.segments, result.issues)
        if report:
            print(report, file=sys.stderr)
        if output is not None and not args.output:
            print(f"hymt: wrote {output}", file=sys.stderr)
    return 0


def _translate(args: argparse.Namespace, translator: Translator, data: bytes, name: str, fmt: DocumentFormat,
               options: TranslateOptions, log: ResumeLog, bar: bool) -> DocumentTranslation:
    if not bar:
        return translator.translate_file(data, args.target, args.source, format=fmt.name, filename=name, log=log,
                                         options=options)
    from tqdm import tqdm

    # leave=True: the final count and rate stay on screen once the file is done.
    with tqdm(total=0, unit="seg", desc=name, file=sys.stderr, leave=True) as progress:
        return translator.translate_file(data, args.target, args.source, format=fmt.name, filename=name, log=log,
                                         options=options, progress=progress)


def _resume_settings(args: argparse.Namespace, fmt: DocumentFormat, translator: Translator,
                     options: TranslateOptions) -> dict[str, object]:
    """Everything besides the file that decides the engine's answers (the resume key)."""
    return {"model": translator.info.model, "family": translator.info.family, "engine": translator.info.engine,
            "format": fmt.name, "to": args.target, "from": args.source, "options": options.to_dict()}


def _write_atomically(path: Path, data: bytes) -> None:
    """Write `path` whole or not at all (an interrupted write leaves the old file)."""
    partial = path.with_name(f".{path.name}.partial")
    partial.write_bytes(data)
    os.replace(partial, path)


def summary(result: DocumentTranslation, output: Path | None) -> dict[str, object]:
    """The --json output for a document."""
    return {
        "output": str(output) if output is not None else None,
        "format": result.format,
        "source": result.source.code if result.source else None,
        "target": result.target.code,
        "segments": [segment.to_dict() for segment in result.segments],
        "translated_segments": result.translated_segments,
        "prompt_tokens": result.prompt_tokens,
        "completion_tokens": result.completion_tokens,
        "elapsed_s": result.elapsed_s,
        "issues": list(result.issues),
    }
