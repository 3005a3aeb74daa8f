"""Dtype names: one table and one resolution for every local backend."""
from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from hymt.engine.dtypes import DTYPE_CHOICES, resolve_dtype
from hymt.errors import InvalidInputError

CPU, CUDA = torch.device("cpu"), torch.device("cuda", 0)


@pytest.mark.parametrize("name,expected", [
    ("bf16", torch.bfloat16), ("BFloat16", torch.bfloat16), ("half", torch.float16), ("fp16", torch.float16),
    ("float", torch.float32), ("FP32", torch.float32),
])
def test_names_are_case_insensitive_aliases(name, expected):
    assert resolve_dtype(name, CPU) is expected


def test_auto_is_bfloat16_on_cuda_and_float32_on_cpu():
    assert resolve_dtype(None, CPU) is torch.float32 and resolve_dtype("auto", CPU) is torch.float32
    assert resolve_dtype(None, CUDA) is torch.bfloat16 and resolve_dtype("AUTO", CUDA) is torch.bfloat16
    assert resolve_dtype(torch.float64, CPU) is torch.float64  # a torch dtype is taken as given


def test_unknown_name_lists_the_choices():
    with pytest.raises(InvalidInputError, match="dtype must be one of auto, bfloat16, bf16") as e:
        resolve_dtype("int3", CPU)
    assert e.value.field == "dtype"
    assert DTYPE_CHOICES == ("auto", "bfloat16", "bf16", "float16", "fp16", "half", "float32", "fp32", "float")


def test_every_local_backend_resolves_names_the_same_way(tiny_config):
    from hymt.engine.backends.transformers_engine import load_hf_model
    from hymt.engine.loader import load_model
    from hymt.engine.native_engine import NativeEngine

    builders = [
        lambda: load_model(dict(tiny_config), "cpu", "int3", random_weights=True),
        lambda: NativeEngine(dict(tiny_config), device="cpu", dtype="int3", random_weights=True),
        lambda: load_hf_model("/nonexistent", device="cpu", dtype="int3"),
    ]
    messages = set()
    for build in builders:
        with pytest.raises(InvalidInputError) as e:
            build()
        messages.add(str(e.value))
    assert len(messages) == 1


def test_the_table_imports_without_torch():
    code = "import sys; import hymt.engine.dtypes; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
