"""Fixtures of the bench tests: a tiny hunyuan_v1_dense config.json for random-weight runs."""
from __future__ import annotations

import json

import pytest
import torch

from hymt.testing import ENGINE_TEST_CONFIG

torch.set_num_threads(2)



@pytest.fixture(scope="session")
def tiny_config_dir(tmp_path_factory):
    """A directory holding only config.json: enough for --random-weights --model DIR."""
    path = tmp_path_factory.mktemp("tiny-config")
    (path / "config.json").write_text(json.dumps(ENGINE_TEST_CONFIG))
    return path
