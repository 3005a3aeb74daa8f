"""`hymt translate`: translate a text, a file or stdin from the command line.

    hymt translate "今天天气真好" --to en
    hymt translate book.md --to de -o book.de.md      # a text file: progress bar, format from suffix
    hymt translate report.docx --to ja                # a document: writes report.ja.docx beside it
    cat notes.txt | hymt translate - --to fr --json

A file comes back as the same kind of file (translate_file.py), in any format of
hymt/documents/registry.py (text, Markdown, HTML, DOCX, PPTX, XLSX, PDF, EPUB, XLIFF, PO, JSON,
YAML, SRT, VTT, ASS, XML), told by the suffix or --format; a file of another suffix is read as
plain text. Text formats go to stdout unless -o, binary ones to `<stem>.<lang><suffix>` next
to the input unless -o; a progress bar runs on stderr, and an interrupted run resumes when the
same command runs again. Text given as the argument or on stdin is translated as --format
says (default: plain text). An argument that looks like a path (a path separator and no
spaces, or a document suffix) but names no file is an error, not text to translate.
Quality-guard issues left on the translation are listed on stderr.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from hymt.cli.engine_args import add_engine_arguments, engine_config_from_args
from hymt.cli.help_format import DefaultsHelpFormatter
from hymt.cli.verbosity import log_level
from hymt.engine.backend_names import BACKENDS
from hymt.errors import InvalidInputError
from hymt.families import DEFAULT_MODEL

if TYPE_CHECKING:
    from hymt.documents.units import DocumentFormat
    from hymt.translate import Translator

#: Longest argument still taken for a possible file name.
_MAX_PATH_CHARS = 4096


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "translate",
        help="translate text, a file or stdin",
        description=__doc__,
        formatter_class=DefaultsHelpFormatter,
    )
    parser.add_argument("input", metavar="TEXT|FILE|-", help="text to translate, a file path, or - for stdin")
    parser.add_argument("--to", dest="target", required=True, help="target language (code or name)")
    parser.add_argument("--from", dest="source", default="auto", help="source language (default: detect)")
    parser.add_argument("--model", default=DEFAULT_MODEL, help="hub id or local checkpoint directory")
    parser.add_argument("--family", help="model family name (default: detected from the checkpoint)")
    parser.add_argument("--engine", default="native", choices=BACKENDS,
                        help="token engine: native (hymt's own), transformers (Hugging Face generate) or "
                             "openai (a remote OpenAI-compatible server, --base-url)")
    parser.add_argument("--base-url", help="server root for --engine openai (e.g. http://127.0.0.1:8001)")
    parser.add_argument("--device", help="torch device (default: CUDA if available, else CPU)")
    parser.add_argument("--dtype", help="weight dtype (default: bfloat16 on CUDA, float32 on CPU)")
    parser.add_argument("--glossary", action="append", default=[], metavar="SRC=TGT",
                        help="glossary entry (repeatable)")
    parser.add_argument("--context", help="preceding text the input follows (context template)")
    parser.add_argument("--style", help="target style (Hy-MT2 style template)")
    parser.add_argument("--template", help="force a prompt template (formatted, delimiters, structured, "
                                           "personalization, fusion, ...)")
    parser.add_argument("--format-type", help="the data format the structured template names (JSON, YAML, ...)")
    parser.add_argument("--preference", action="append", default=[], metavar="LINE",
                        help="a preference line of the personalization template (repeatable)")
    parser.add_argument("--candidate", action="append", default=[], metavar="TEXT",
                        help="a candidate translation for the fusion template (repeatable; Chimera)")
    parser.add_argument("--fusion", type=int, default=0, metavar="N",
                        help="Chimera: N sampled candidates by the model, then one fusion request")
    parser.add_argument("--format",
                        help="input format: text, markdown, html, "
                             "docx, pptx, xlsx, pdf, epub, xliff, po, json, yaml, srt, vtt, ass, xml; default: "
                             "from the file suffix, else text")
    parser.add_argument("--sampling", choices=("greedy", "official"), default="greedy",
                        help="greedy (deterministic, cached) or the family's official sampling")
    parser.add_argument("-o", "--output",
                        help="write the translation to this file (default: stdout; a binary document: "
                             "<stem>.<lang><suffix> next to the input)")
    parser.add_argument("--json", action="store_true", help="print the whole result (segments included) as JSON")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the translation cache")
    parser.add_argument("--no-retry", action="store_true",
                        help="report quality-guard issues without sending a flagged segment again")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar for files (-q: none either)")
    add_engine_arguments(parser.add_argument_group("native engine (--engine native)"))
    parser.set_defaults(func=run)


def parse_glossary(entries: list[str]) -> list[tuple[str, str]]:
    pairs = []
    for entry in entries:
        source, sep, target = entry.partition("=")
        if not sep or not source.strip() or not target.strip():
            raise InvalidInputError(f"--glossary takes SRC=TGT, got {entry!r}", field="glossary")
        pairs.append((source.strip(), target.strip()))
    return pairs


def looks_like_path(arg: str) -> bool:
    """True for an argument meant as a file name: one line ending in a document suffix, or
    a single word with a path separator that is not a URL ("notes/ch1", "./draft")."""
    if "\n" in arg or len(arg) > _MAX_PATH_CHARS:
        return False
    if _document_suffix(arg):
        return True
    has_separator = any(sep in arg for sep in {"/", os.sep})
    return has_separator and not any(ch.isspace() for ch in arg) and "://" not in arg


def _document_suffix(arg: str) -> bool:
    """True when `arg` ends in a document format's suffix (the registry's)."""
    if "." not in arg[-8:]:  # most arguments are text: the formats are imported only for a suffix
        return False
    from hymt.documents.registry import format_for_filename
    from hymt.errors import InvalidDocumentError

    try:
        format_for_filename(arg)
    except InvalidDocumentError:
        return False
    return True


def input_file(arg: str) -> Path | None:
    """The file `arg` names, None for text or stdin; a path-like argument that names no file,
    or a directory, is an error (before any model loads)."""
    if arg == "-" or not (looks_like_path(arg) or (len(arg) < _MAX_PATH_CHARS and "\n" not in arg
                                                   and Path(arg).is_file())):
        return None
    path = Path(arg).expanduser()
    if path.is_dir():
        raise InvalidInputError(f"{arg} is a directory; pass a text file or a document", field="input")
    if not path.is_file():
        raise InvalidInputError(
            f"no such file: {arg} (to translate these words as text, pipe them in: "
            f"echo {shlex.quote(arg)} | hymt translate - --to LANG)", field="input")
    return path


def document_format_of(path: Path | None, format_name: str | None) -> DocumentFormat | None:
    """The format a file (or stdin with --format) is translated as: --format, else the file's
    suffix, else plain text; None for text given as the argument or on stdin without --format.
    An unknown --format is an error listing the valid ones."""
    from hymt.documents.registry import format_for_filename, get_format
    from hymt.errors import InvalidDocumentError

    if format_name is not None:
        return get_format(format_name, field="format")
    if path is None:
        return None
    try:
        return format_for_filename(path.name)
    except InvalidDocumentError:
        return get_format("text")


def read_input(arg: str) -> tuple[str, str | None]:
    """(text, file name or None). `-` reads stdin; an existing file is read; a path-like
    argument that names no file, and empty text, are errors (before any model loads)."""
    path = input_file(arg)
    if arg == "-":
        text, what, filename = sys.stdin.read(), "stdin", None
    elif path is not None:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInputError(f"{arg} is not UTF-8 text: {exc}", field="input") from exc
        what, filename = arg, path.name
    else:
        text, what, filename = arg, "the text", None
    if not text.strip():
        raise InvalidInputError(f"nothing to translate: {what} is empty", field="input")
    return text, filename


def _check_output(output: str | None) -> None:
    if output is None:
        return
    parent = Path(output).expanduser().parent
    if not parent.is_dir():
        raise InvalidInputError(f"cannot write {output}: the directory {parent} does not exist", field="output")


def run(args: argparse.Namespace) -> int:
    from hymt.documents.registry import get_format
    from hymt.languages import get_language

    # Every argument is checked before the model loads (seconds to minutes).
    get_language(args.target, field="to")
    if args.source != "auto":
        get_language(args.source, field="source")
    glossary = parse_glossary(args.glossary)
    _check_output(args.output)
    path = input_file(args.input)
    file_input = path is not None or (args.input == "-" and args.format is not None)
    document = document_format_of(path, args.format) if file_input else None
    from hymt.translate.options import TranslateOptions
    from hymt.translate.sampling_policy import Sampling

    options = TranslateOptions(
        glossary=tuple(glossary),
        context=args.context,
        style=args.style,
        template=args.template,
        format_type=args.format_type,
        preferences=tuple(args.preference),
        candidates=tuple(args.candidate),
        fusion=args.fusion,
        sampling=Sampling(preset=args.sampling),
        use_cache=not args.no_cache,
        retry=not args.no_retry,
    )
    if document is not None:
        from hymt.cli.translate_file import output_path, translate_document_file

        output_path(args, path, document)  # refuses to overwrite the input before the model loads
        if path is not None and not path.read_bytes().strip():
            raise InvalidInputError(f"nothing to translate: {args.input} is empty", field="input")
        with open_translator(args) as translator:
            return translate_document_file(args, path, document, translator, options)
    if args.format is not None and not get_format(args.format, field="format").text:
        raise InvalidInputError(f"--format {args.format} translates a file: pass its path or - (stdin)",
                                field="format")
    text, _ = read_input(args.input)
    with open_translator(args) as translator:
        result = translator.translate(text, args.target, args.source,
                                      options=options.replace(format=args.format or "text"))
    out = json.dumps(result.to_dict(), ensure_ascii=False, indent=2) + "\n" if args.json else result.text
    if not args.json and log_level(args) <= logging.WARNING:
        from hymt.cli.issue_report import issue_report

        report = issue_report(result)
        if report:
            print(report, file=sys.stderr)
    if args.output:
        Path(args.output).write_text(out, encoding="utf-8")
    else:
        sys.stdout.write(out if out.endswith("\n") or args.json else out + "\n")
    return 0


def open_translator(args: argparse.Namespace) -> Translator:
    """The Translator the command line asks for (loads the model)."""
    from hymt.translate import Translator

    engine_options = {"base_url": args.base_url} if args.base_url else None
    config = engine_config_from_args(args, args.engine)
    return Translator(args.model, engine=args.engine, device=args.device, dtype=args.dtype, engine_config=config,
                      family=args.family, cache=not args.no_cache, engine_options=engine_options)
