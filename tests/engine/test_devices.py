"""Device resolution shared by the local backends."""
from __future__ import annotations

import pytest
import torch

from hymt.engine.devices import resolve_device
from hymt.errors import InvalidInputError


def test_default_and_explicit_devices():
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert resolve_device(None).type == expected
    assert resolve_device("cpu") == torch.device("cpu")


def test_bad_names_are_invalid_input():
    with pytest.raises(InvalidInputError, match="not a torch device") as e:
        resolve_device("gpu0")
    assert e.value.field == "device"


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the CPU-only machine's message")
def test_cuda_without_a_gpu_says_so():
    with pytest.raises(InvalidInputError, match="CUDA is not available; use device='cpu'"):
        resolve_device("cuda")
