"""`hymt` as a user runs it: `python -m hymt ...` in a subprocess, this checkout first on
PYTHONPATH (fixture `hymt_cli`: `run(*args, stdin=None, env=None)` -> CompletedProcess with
text output, `popen(*args, env=None, **kw)` -> Popen)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TIMEOUT_S = 180


class HymtCli:
    def command(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "hymt", *args]

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
        return {**os.environ, "PYTHONPATH": path, **(extra or {})}

    def run(self, *args: str, stdin: str | None = None, env: dict[str, str] | None = None,
            **kw) -> subprocess.CompletedProcess:
        return subprocess.run(self.command(*args), input=stdin if stdin is not None else "", capture_output=True,
                              text=True, env=self.env(env), timeout=TIMEOUT_S, **kw)

    def popen(self, *args: str, env: dict[str, str] | None = None, **kw) -> subprocess.Popen:
        return subprocess.Popen(self.command(*args), env=self.env(env), **kw)


@pytest.fixture(scope="session")
def hymt_cli() -> HymtCli:
    return HymtCli()
