import argparse
import logging

import pytest

from hymt.cli.verbosity import add_verbosity_options, log_level


def _parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_verbosity_options(parser)
    return parser.parse_args(list(argv))


@pytest.mark.parametrize(("argv", "default", "level"), [
    ((), logging.WARNING, logging.WARNING),
    (("-v",), logging.WARNING, logging.INFO),
    (("-vv",), logging.WARNING, logging.DEBUG),
    (("-vvv",), logging.WARNING, logging.DEBUG),
    (("-q",), logging.WARNING, logging.ERROR),
    ((), logging.INFO, logging.INFO),  # serve
    (("-v",), logging.INFO, logging.DEBUG),
    (("-q",), logging.INFO, logging.ERROR),
])
def test_log_level(argv, default, level):
    assert log_level(_parse(*argv), default) == level
