"""The Triton GEMV against F.linear, run by Triton's interpreter on CPU, and the Linear
module's switch to it."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from hymt.engine.layers import Linear, triton_available

pytestmark = [
    pytest.mark.skipif(not triton_available(), reason="triton not installed (pip install triton==3.6.0)"),
    pytest.mark.usefixtures("triton_interpreter"),
]


@pytest.mark.parametrize("rows", [1, 2, 3, 4])
@pytest.mark.parametrize("bias", [False, True])
def test_gemv_matches_linear_for_one_to_four_rows(rows, bias):
    from hymt.engine.layers.triton_gemv import gemv_triton

    torch.manual_seed(rows)
    # 1030 columns and 700 inputs: neither a multiple of the kernel's blocks
    x, w = torch.randn(rows, 700), torch.randn(1030, 700)
    b = torch.randn(1030) if bias else None
    torch.testing.assert_close(gemv_triton(x, w, b), F.linear(x, w, b), rtol=1e-4, atol=1e-4)


def test_gemv_reads_half_precision_and_writes_its_dtype():
    from hymt.engine.layers.triton_gemv import gemv_triton

    x, w = torch.randn(2, 512).half(), torch.randn(64, 512).half()
    out = gemv_triton(x, w)
    assert out.dtype == torch.float16
    torch.testing.assert_close(out.float(), F.linear(x.float(), w.float()), rtol=2e-3, atol=2e-2)


def test_gemv_refuses_more_rows_than_it_serves():
    from hymt.engine.layers.triton_gemv import GEMV_MAX_ROWS, gemv_triton

    with pytest.raises(ValueError, match=f"at most {GEMV_MAX_ROWS} rows"):
        gemv_triton(torch.randn(GEMV_MAX_ROWS + 1, 16), torch.randn(8, 16))


def test_a_linear_takes_the_gemv_up_to_its_gemv_rows(monkeypatch):
    from hymt.engine.layers import triton_gemv

    layer = Linear(96, 40, bias=True)
    torch.nn.init.normal_(layer.weight)
    torch.nn.init.normal_(layer.bias)
    calls = []
    real = triton_gemv.gemv_triton

    def counting(x, w, b=None):
        calls.append(x.shape[0])
        return real(x, w, b)

    monkeypatch.setattr(triton_gemv, "gemv_triton", counting)
    layer.gemv_rows = 2
    for rows in (1, 2, 3):
        x = torch.randn(rows, 96)
        torch.testing.assert_close(layer(x), F.linear(x, layer.weight, layer.bias), rtol=1e-4, atol=1e-4)
    assert calls == [1, 2]  # three rows went to F.linear


def test_no_gemv_is_chosen_for_weights_off_the_gpu():
    from hymt.engine.layers.gemv_choice import choose_gemv_kernels

    model = torch.nn.Sequential(Linear(32, 16), Linear(16, 8))
    assert choose_gemv_kernels(model) == {}
    assert [m.gemv_rows for m in model] == [0, 0]
