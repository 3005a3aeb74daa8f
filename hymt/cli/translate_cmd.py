"""`hymt translate`: translate a text, a file or stdin from the command line.

    hymt translate "今天天气真好" --to en
    hymt translate book.md --to de -o book.de.md      # a file: progress bar, format from suffix
    cat notes.txt | hymt translate - --to fr --json

A TEXT argument that names an existing file is read (UTF-8) and translated as a document
with a progress bar on stderr; its format comes from the suffix (.md, .srt, .html, else
text) unless --format says otherwise. An argument that looks like a path (a path separator
and no spaces, or a document suffix) but names no file is an error, not text to translate.
Quality-guard issues left on the translation are listed on stderr.
"""
from __future__ import annotations

import argparse
import functools
import json
import logging
import os
import shlex
import sys
from pathlib import Path

from hymt.cli.help_format import DefaultsHelpFormatter
from hymt.cli.verbosity import log_level
from hymt.engine.backend_names import BACKENDS
from hymt.engine.config import QUANTIZATION_CHOICES
from hymt.errors import InvalidInputError
from hymt.families import DEFAULT_MODEL


@functools.lru_cache(maxsize=1)
def document_suffixes() -> tuple[str, ...]:
    """Suffixes of the documents `translate` reads: every registered format's (imported when
    first needed: the formats' libraries cost a third of a second)."""
    from hymt.documents.registry import FORMATS

    return tuple(sorted({s for f in FORMATS for s in f.suffixes}))
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
    parser.add_argument("--quantization", choices=QUANTIZATION_CHOICES[1:],
                        help="weight quantization at load (native engine); fp8 needs a Hopper-class GPU")
    parser.add_argument("--glossary", action="append", default=[], metavar="SRC=TGT",
                        help="glossary entry (repeatable)")
    parser.add_argument("--context", help="preceding text the input follows (context template)")
    parser.add_argument("--style", help="target style (Hy-MT2 style template)")
    parser.add_argument("--template", help="force a prompt template (formatted, delimiters, ...)")
    parser.add_argument("--format", choices=None,
                        help="input format (default: from the file suffix, else text)")
    parser.add_argument("--sampling", choices=("greedy", "official"), default="greedy",
                        help="greedy (deterministic, cached) or the family's official sampling")
    parser.add_argument("-o", "--output", help="write the translation to this file instead of stdout")
    parser.add_argument("--json", action="store_true", help="print the whole result (segments included) as JSON")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the translation cache")
    parser.add_argument("--no-retry", action="store_true",
                        help="report quality-guard issues without sending a flagged segment again")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar for files (-q: none either)")
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
    if arg.lower().endswith(document_suffixes()):
        return True
    has_separator = any(sep in arg for sep in {"/", os.sep})
    return has_separator and not any(ch.isspace() for ch in arg) and "://" not in arg


def read_input(arg: str) -> tuple[str, str | None]:
    """(text, file name or None). `-` reads stdin; an existing file is read; a path-like
    argument that names no file, and empty text, are errors (before any model loads)."""
    if arg == "-":
        text, what, filename = sys.stdin.read(), "stdin", None
    elif looks_like_path(arg) or (len(arg) < _MAX_PATH_CHARS and "\n" not in arg and Path(arg).is_file()):
        path = Path(arg).expanduser()
        if path.is_dir():
            raise InvalidInputError(f"{arg} is a directory; pass a text, markdown, HTML or SRT file", field="input")
        if not path.is_file():
            raise InvalidInputError(
                f"no such file: {arg} (to translate these words as text, pipe them in: "
                f"echo {shlex.quote(arg)} | hymt translate - --to LANG)", field="input")
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
    from hymt.languages import get_language

    # Every argument is checked before the model loads (seconds to minutes).
    get_language(args.target, field="to")
    if args.source != "auto":
        get_language(args.source, field="source")
    glossary = parse_glossary(args.glossary)
    _check_output(args.output)
    text, filename = read_input(args.input)

    from hymt.documents.registry import format_for_filename
    from hymt.translate import Translator

    fmt = args.format or (format_for_filename(filename).name if filename else "text")
    options = dict(
        glossary=glossary or None,
        context=args.context,
        style=args.style,
        template=args.template,
        format=fmt,
        sampling=None if args.sampling == "greedy" else args.sampling,
        use_cache=not args.no_cache,
        retry=not args.no_retry,
    )
    engine_options = {"base_url": args.base_url} if args.base_url else None
    with Translator(
        args.model, engine=args.engine, device=args.device, dtype=args.dtype, quantization=args.quantization,
        family=args.family,
        cache=not args.no_cache, engine_options=engine_options,
    ) as translator:
        if filename is not None and not args.no_progress and log_level(args) <= logging.WARNING:
            from tqdm import tqdm

            # leave=True: the final count and rate stay on screen once the file is done.
            with tqdm(total=0, unit="seg", desc=filename, file=sys.stderr, leave=True) as bar:
                result = translator.translate_document(text, args.target, args.source, progress=bar, **options)
        else:
            result = translator.translate(text, args.target, args.source, **options)
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
