"""Which kernels a tensor gets, and EngineConfig.disable_triton's hold on that choice."""
from __future__ import annotations

import pytest
import torch

from hymt.engine.config import EngineConfig
from hymt.engine.layers.kernel_choice import next_pow2, set_triton_disabled, triton_available, use_triton

pytestmark = pytest.mark.skipif(not triton_available(), reason="triton not installed (pip install triton==3.6.0)")


def test_next_pow2():
    assert [next_pow2(n) for n in (1, 2, 3, 16, 17, 100)] == [1, 2, 4, 16, 32, 128]


def test_disabling_triton_routes_every_tensor_to_torch(triton_interpreter):
    x = torch.zeros(4)  # under the interpreter, CPU tensors take the Triton paths
    assert use_triton(x)
    previous = set_triton_disabled(True)
    try:
        assert previous is False and not use_triton(x)
    finally:
        set_triton_disabled(previous)
    assert use_triton(x)


def test_a_native_engine_holds_its_setting_while_open(triton_interpreter, tiny_config):
    from hymt.engine.native_engine import NativeEngine

    engine = NativeEngine(dict(tiny_config), EngineConfig(num_kv_blocks=8, disable_triton=True), device="cpu",
                          random_weights=True)
    try:
        assert not use_triton(torch.zeros(1))
    finally:
        engine.close()
    assert use_triton(torch.zeros(1))
