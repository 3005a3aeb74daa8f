"""`hymt` command line: one module per subcommand, each exposing `register(subparsers)`.

A subcommand module adds its parser and sets `func` (called with the parsed namespace,
returning an exit code). Modules import heavy dependencies inside `func`, so `hymt --help`
stays fast and `hymt bench` never imports the server stack.
"""
from __future__ import annotations

import argparse
import importlib
import logging
import sys

from hymt.errors import HymtError

#: Subcommand modules, in the order `hymt --help` lists them.
COMMAND_MODULES = (
    "hymt.cli.serve_cmd",
    "hymt.cli.translate_cmd",
    "hymt.cli.eval_cmd",
    "hymt.cli.prompt_cmd",
    "hymt.cli.languages_cmd",
    "hymt.cli.bench_cmd",
    "hymt.cli.download_cmd",
    "hymt.cli.make_test_model_cmd",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hymt", description="Translation server, CLI and SDK for Tencent's Hunyuan translation models."
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log at DEBUG level")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # the subcommand is not written yet
                continue
            raise
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except HymtError as exc:
        print(f"hymt: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
