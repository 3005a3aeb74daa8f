"""`hymt translate`: translate a text, a file or stdin from the command line.

    hymt translate "今天天气真好" --to en
    hymt translate book.md --to de -o book.de.md      # a file: progress bar, format from suffix
    cat notes.txt | hymt translate - --to fr --json

A TEXT argument that names an existing file is read (UTF-8) and translated as a document
with a progress bar on stderr; its format comes from the suffix (.md, .srt, .html, else
text) unless --format says otherwise.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from hymt.engine.config import QUANTIZATION_CHOICES

DEFAULT_MODEL = "tencent/HY-MT1.5-1.8B"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "translate",
        help="translate text, a file or stdin",
        description="Translate TEXT, the contents of FILE, or stdin (-).",
    )
    parser.add_argument("input", metavar="TEXT|FILE|-", help="text to translate, a file path, or - for stdin")
    parser.add_argument("--to", dest="target", required=True, help="target language (code or name)")
    parser.add_argument("--from", dest="source", default="auto", help="source language (default: detect)")
    parser.add_argument("--model", default=DEFAULT_MODEL, help=f"hub id or local checkpoint dir (default {DEFAULT_MODEL})")
    parser.add_argument("--family", help="model family name (default: detected from the checkpoint)")
    parser.add_argument("--engine", default="native", choices=("native", "transformers", "openai"),
                        help="token engine backend (default native)")
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
    parser.add_argument("--format", choices=("text", "markdown", "html", "srt"),
                        help="input format (default: from the file suffix, else text)")
    parser.add_argument("--sampling", choices=("greedy", "official"), default="greedy",
                        help="greedy (default, cached) or the family's official sampling")
    parser.add_argument("-o", "--output", help="write the translation to this file instead of stdout")
    parser.add_argument("--json", action="store_true", help="print the whole result (segments included) as JSON")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the translation cache")
    parser.add_argument("--no-retry", action="store_true",
                        help="report quality-guard issues without sending a flagged segment again")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar for files")
    parser.set_defaults(func=run)


def parse_glossary(entries: list[str]) -> list[tuple[str, str]]:
    from hymt.errors import InvalidInputError

    pairs = []
    for entry in entries:
        source, sep, target = entry.partition("=")
        if not sep or not source.strip() or not target.strip():
            raise InvalidInputError(f"--glossary takes SRC=TGT, got {entry!r}", field="glossary")
        pairs.append((source.strip(), target.strip()))
    return pairs


def _read_input(arg: str) -> tuple[str, str | None]:
    """(text, file name or None). `-` reads stdin; an existing path reads the file."""
    from hymt.errors import InvalidInputError

    if arg == "-":
        return sys.stdin.read(), None
    path = Path(arg)
    if len(arg) < 4096 and "\n" not in arg and path.is_file():
        try:
            return path.read_text(encoding="utf-8"), path.name
        except UnicodeDecodeError as exc:
            raise InvalidInputError(f"{arg} is not UTF-8 text: {exc}", field="input") from exc
    return arg, None


def run(args: argparse.Namespace) -> int:
    from hymt.languages import get_language
    from hymt.translate import Translator, guess_format

    get_language(args.target, field="to")  # fail before loading a model
    if args.source != "auto":
        get_language(args.source, field="source")
    glossary = parse_glossary(args.glossary)
    text, filename = _read_input(args.input)
    fmt = args.format or (guess_format(filename) if filename else "text")
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
        if filename is not None and not args.no_progress:
            from tqdm import tqdm

            with tqdm(total=0, unit="seg", desc=filename, file=sys.stderr, leave=False) as bar:
                result = translator.translate_document(text, args.target, args.source, progress=bar, **options)
        else:
            result = translator.translate(text, args.target, args.source, **options)
    out = json.dumps(result.to_dict(), ensure_ascii=False, indent=2) + "\n" if args.json else result.text
    if args.output:
        Path(args.output).write_text(out, encoding="utf-8")
    else:
        sys.stdout.write(out if out.endswith("\n") or args.json else out + "\n")
    return 0
