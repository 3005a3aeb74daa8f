"""`hymt` command line: one module per subcommand, each exposing `register(subparsers)`.

A subcommand module adds its parser and sets `func` (called with the parsed namespace,
returning an exit code). Modules import heavy dependencies inside `func`, so `hymt --help`
stays fast and `hymt bench` never imports the server stack.

Every command takes -v/-q (hymt/cli/verbosity.py), and exits quietly when whoever reads its
output closes the pipe (`hymt languages | head`).
"""
from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys

from hymt import __version__
from hymt.cli.verbosity import add_verbosity_options, log_level
from hymt.errors import HymtError

#: Subcommand modules, in the order `hymt --help` lists them.
COMMAND_MODULES = (
    "hymt.cli.serve_cmd",
    "hymt.cli.translate_cmd",
    "hymt.cli.translate_corpus_cmd",
    "hymt.cli.eval_cmd",
    "hymt.cli.prompt_cmd",
    "hymt.cli.languages_cmd",
    "hymt.cli.bench_cmd",
    "hymt.cli.download_cmd",
    "hymt.cli.make_test_model_cmd",
)

#: Exit status after the reader of stdout went away: what a shell reports for a process that
#: SIGPIPE ended (128 + 13), as for `cat` or `grep` in the same place.
EXIT_BROKEN_PIPE = 141
#: Exit status of a command that failed on a deliberate error (bad argument, unknown model).
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hymt", description="Translation server, CLI and SDK for Tencent's Hunyuan translation models."
    )
    parser.add_argument("--version", action="version", version=f"hymt {__version__}")
    add_verbosity_options(parser)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # the subcommand is not written yet
                continue
            raise
        module.register(subparsers)
    for subparser in subparsers.choices.values():
        add_verbosity_options(subparser)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        try:
            return _run(argv)
        finally:  # also after --help's SystemExit: a closed pipe shows here, not at interpreter exit
            sys.stdout.flush()
    except BrokenPipeError:
        _discard_stdout()
        return EXIT_BROKEN_PIPE


def _run(argv: list[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=log_level(args), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(args.func(args) or 0)
    except HymtError as exc:
        print(f"hymt: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


def _discard_stdout() -> None:
    """Points stdout at /dev/null, so that the interpreter's final flush of what is still
    buffered does not raise a second BrokenPipeError ("Exception ignored ...") at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout replaced by an object without a descriptor (tests)
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
