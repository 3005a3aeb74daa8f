"""`-v/--verbose` and `-q/--quiet`: how much every `hymt` command logs on stderr.

A command has a default level: warnings for the one-shot commands (their output is the
answer, engine internals are noise), info for `serve` (its log is its output). Each `-v`
lowers that by one step (info, then debug); `-q` leaves errors only.
"""
from __future__ import annotations

import argparse
import logging

_STEPS = (logging.ERROR, logging.WARNING, logging.INFO, logging.DEBUG)


def add_verbosity_options(parser: argparse.ArgumentParser) -> None:
    """Adds -v/-q to `parser`. SUPPRESS defaults: given before or after the subcommand name,
    the flag is kept (a subparser's default would overwrite the main parser's value)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS,
                       help="log more on stderr: -v info, -vv debug")
    group.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS,
                       help="log errors only")


def log_level(args: argparse.Namespace, default: int = logging.WARNING) -> int:
    """The logging level `args` ask for, from the command's `default` level."""
    if getattr(args, "quiet", False):
        return logging.ERROR
    step = _STEPS.index(default) + getattr(args, "verbose", 0)
    return _STEPS[min(step, len(_STEPS) - 1)]
