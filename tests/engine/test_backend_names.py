"""The backend names: one tuple, importable without torch (the CLI reads it at start-up)."""
from __future__ import annotations

import subprocess
import sys

from hymt.engine.backend_names import BACKENDS, LOCAL_BACKENDS


def test_names_and_local_subset():
    assert BACKENDS == ("native", "transformers", "openai")
    assert LOCAL_BACKENDS == ("native", "transformers")


def test_importing_the_names_loads_no_torch():
    code = "import sys; import hymt.engine.backend_names; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
