"""The `hymt` entry point (hymt/cli/__init__.py): --version, -v/-q everywhere, closed pipes."""
from __future__ import annotations

import subprocess

import pytest

import hymt
from hymt.cli import EXIT_BROKEN_PIPE, build_parser


def test_version(hymt_cli):
    result = hymt_cli.run("--version")
    assert result.returncode == 0 and result.stdout.strip() == f"hymt {hymt.__version__}"


# argparse drops the write errors of its help text itself (and exits 0); either way, quietly.
@pytest.mark.parametrize(("argv", "codes"), [
    (["languages", "--json"], {EXIT_BROKEN_PIPE}),
    (["languages"], {EXIT_BROKEN_PIPE}),
    (["prompt", "Hello", "--to", "de"], {EXIT_BROKEN_PIPE}),
    (["--help"], {0, EXIT_BROKEN_PIPE}),
    (["translate", "--help"], {0, EXIT_BROKEN_PIPE}),
])
def test_a_closed_pipe_ends_the_command_quietly(hymt_cli, argv, codes):
    """`hymt languages --json | head -c 600`: the reader goes away before the output is out."""
    proc = hymt_cli.popen(*argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # closed before the child writes: every write it makes fails
    _, err = proc.communicate(timeout=60)
    assert err.decode() == "", "no traceback, no 'Exception ignored' line"
    assert proc.returncode in codes


def test_every_command_takes_verbose_and_quiet():
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices
    assert {"serve", "translate", "prompt", "languages", "bench", "download", "make-test-model"} <= set(commands)
    for name, subparser in commands.items():
        text = subparser.format_help()
        assert "-v, --verbose" in text and "-q, --quiet" in text, name
    # before or after the command name
    assert build_parser().parse_args(["-q", "languages"]).quiet
    assert build_parser().parse_args(["languages", "-vv"]).verbose == 2


def test_verbose_and_quiet_exclude_each_other(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["languages", "-v", "-q"])
    assert "not allowed with" in capsys.readouterr().err
