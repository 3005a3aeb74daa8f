"""Shared fixtures of the engine-core tests: tiny models, CPU threads."""
from __future__ import annotations

import os

import pytest
import torch

from hymt.testing import ENGINE_TEST_CONFIG

# Triton's interpreter must be chosen before triton is first imported; without a GPU the
# compiled mode cannot run anyway, so the kernel tests (layers/, quant/) get the interpreter.
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

# The dev machine has 2 cores shared between test runs; tiny models gain nothing from more.
torch.set_num_threads(2)


@pytest.fixture(scope="session")
def tiny_config() -> dict:
    return ENGINE_TEST_CONFIG


@pytest.fixture(scope="module")
def triton_interpreter():
    """CPU tensors take the Triton kernels (interpreted) for the tests of one module."""
    from hymt.engine.layers.kernel_choice import triton_interpreter_on_cpu, triton_interpreter_unavailable

    reason = triton_interpreter_unavailable()  # e.g. an earlier test imported triton compiled
    if reason:
        pytest.skip(f"Triton interpreter unavailable in this process: {reason}")
    with triton_interpreter_on_cpu():
        yield
