"""The int4 kernels' weight loads, read off their sm_90 PTX (compiled here, no GPU needed).

Speed itself is measured on the H200 (tools/gpu_check_quant.py, docs/BENCHMARKS.md); this
guards the property that made the kernels reading tinygemm's layout as fast as our own: 16-byte
pipelined loads, not 1-byte ones.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).with_name("compile_sm90.py")


@pytest.fixture(scope="module")
def loads() -> dict:
    pytest.importorskip("triton")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    done = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, env=env, timeout=300)
    if done.returncode and "ptxas" in done.stderr.lower() and "not found" in done.stderr.lower():
        pytest.skip(f"triton cannot compile for sm_90 here: {done.stderr[-300:]}")
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_fused_kernel_on_tinygemm_words_loads_like_our_int4(loads):
    assert loads["tg_mm"]["byte_loads"] == 0, loads
    assert loads["tg_mm"]["cp_async"] == loads["int_mm"]["cp_async"] > 0, loads
    assert loads["tg_mm_wide"]["byte_loads"] == 0 and loads["tg_mm_wide"]["cp_async"] > 0, loads


def test_int4_kernels_unpack_without_int_to_float_conversions(loads):
    """triton_int_matmul.int4_minus's bit trick; int8 still converts each weight, which shows
    that the count sees conversions."""
    assert loads["int8_mm"]["int_to_float"] > 0, loads
    for kernel in ("int_mm", "int_dequant", "tg_mm", "tg_mm_wide", "tg_dequant"):
        assert loads[kernel]["int_to_float"] == 0, (kernel, loads)


def test_dequantizer_on_tinygemm_words_loads_like_our_int4(loads):
    assert loads["tg_dequant"]["byte_loads"] == 0, loads
    assert loads["tg_dequant"]["vector_loads"] == loads["int_dequant"]["vector_loads"] > 0, loads
