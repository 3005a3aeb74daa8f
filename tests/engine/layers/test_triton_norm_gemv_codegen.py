"""The fused norm + GEMV kernel's machine code for sm_90, compiled here without a GPU: weight
loads 16 bytes wide and no register spills, at the real hidden sizes and 1, 2 and 4 rows.

A GEMV at batch 1 is worth having only if it streams its weight at full width; the
interpreter cannot see that. The kernel is compiled as a launch specialises it (pointers and
strides divisible by 16), then Triton's ptxas reports registers and spills. It runs in a
subprocess because the test process has TRITON_INTERPRET=1 set before triton's import.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile

import pytest

from hymt.engine.layers import triton_available

pytestmark = pytest.mark.skipif(not triton_available(), reason="triton not installed (pip install triton==3.6.0)")

BF16 = "*bf16"
POINTERS = ("x_ptr", "res_ptr", "norm_w_ptr", "w_ptr", "out_ptr", "res_out_ptr")


def report() -> None:
    from test_triton_compile import compile_sm90
    from triton import knobs

    from hymt.engine.layers import triton_norm_gemv as ng

    ptrs = dict.fromkeys(POINTERS, BF16)
    aligned = (*POINTERS, "N", *(n for n in ng._norm_gemv_kernel.arg_names if n.startswith("stride")))
    ptxas = knobs.nvidia.ptxas.path  # the ptxas Triton ships, for sm_90
    for hidden in (2048, 4096):
        for rows in (1, 2, 4):
            for swiglu in (False, True):
                consts = dict(K=hidden, HAS_RESIDUAL=True, SWIGLU=swiglu, M_PAD=rows, BLOCK_N=ng._BLOCK_N,
                              BLOCK_K=ng.block_k(rows))
                # num_stages 3: Triton's default, which norm_linear_triton's launch keeps
                ptx = compile_sm90(ng._norm_gemv_kernel, ptrs, ("eps",), consts, aligned, num_stages=3).asm["ptx"]
                with tempfile.TemporaryDirectory() as tmp:
                    path = os.path.join(tmp, "k.ptx")
                    with open(path, "w") as f:
                        f.write(ptx)
                    run = subprocess.run([ptxas, "-arch=sm_90a", "-v", path, "-o", path + ".cubin"],
                                         capture_output=True, text=True, check=True)
                spills = sum(int(b) for b in re.findall(r"(\d+) bytes spill", run.stdout + run.stderr))
                narrow = len(re.findall(r"ld\.global\.(?:b16|b32|v2)", ptx))
                print(f"hidden {hidden} rows {rows} swiglu {swiglu}: spills {spills} narrow loads {narrow} "
                      f"wide loads {ptx.count('ld.global.v4')}")


def test_weight_loads_are_wide_and_nothing_spills():
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    run = subprocess.run([sys.executable, __file__], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    lines = run.stdout.splitlines()
    assert len(lines) == 12, run.stdout
    for line in lines:
        assert "spills 0 narrow loads 0 " in line and "wide loads 0" not in line, line


if __name__ == "__main__":
    report()
