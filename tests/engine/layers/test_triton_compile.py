"""Every Triton kernel compiles for sm_90 (H200) at the real model shapes, without a GPU.

The interpreter runs kernels as numpy and misses what only the compiler checks (constexpr
rules, dot shapes, early returns, fp8 casts, register/shared-memory limits). Triton ships
ptxas, so compiling ahead of time for a GPUTarget works on this CPU machine. It runs in a
subprocess because the test process has TRITON_INTERPRET=1 set before triton's import.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from hymt.engine.layers import triton_available

pytestmark = pytest.mark.skipif(not triton_available(), reason="triton not installed (pip install triton==3.6.0)")

BF16 = "*bf16"
# (kernel, pointer arg types, float args, constexprs) per variant; every other arg is an i32.
SHAPES = {"1.8B": dict(heads=16, kv=4, hidden=2048), "7B": dict(heads=32, kv=8, hidden=4096)}


def variants():
    from hymt.engine.layers import triton_activation as act
    from hymt.engine.layers import triton_attention as att
    from hymt.engine.layers import triton_norm as norm
    from hymt.engine.layers import triton_rotary as rot

    attn_ptrs = dict(q_ptr=BF16, k_cache_ptr=BF16, v_cache_ptr=BF16, out_ptr=BF16, qsl_ptr="*i32",
                     seq_lens_ptr="*i32", bt_ptr="*i32", items_ptr="*i32", part_acc_ptr="*fp32",
                     part_ml_ptr="*fp32")
    for name, s in SHAPES.items():
        group = s["heads"] // s["kv"]
        yield f"prefill {name}", att._prefill_kernel, attn_ptrs, ("scale_log2",), dict(
            GROUP=group, GROUP_PAD=group, HEAD_DIM=128, BLOCK_SIZE=16, BLOCK_Q=16, BLOCK_N=64, PRECISION="tf32")
        fp8_cache = {**attn_ptrs, "k_cache_ptr": "*fp8e4nv", "v_cache_ptr": "*fp8e4nv"}
        yield f"prefill {name} fp8 cache", att._prefill_kernel, fp8_cache, ("scale_log2",), dict(
            GROUP=group, GROUP_PAD=group, HEAD_DIM=128, BLOCK_SIZE=16, BLOCK_Q=16, BLOCK_N=64, PRECISION="tf32")
        for splits, ptrs in ((1, attn_ptrs), (16, attn_ptrs), (1, fp8_cache)):
            yield f"decode {name} splits {splits} cache {ptrs['k_cache_ptr']}", att._decode_kernel, ptrs, (
                "scale_log2",), dict(NUM_HEADS=s["heads"], GROUP=group, GROUP_PAD=16, HEAD_DIM=128, BLOCK_SIZE=16,
                                     BLOCK_N=64, NUM_SPLITS=splits, PRECISION="tf32")
        yield f"reduce {name}", att._decode_reduce_kernel, attn_ptrs, (), dict(
            NUM_HEADS=s["heads"], HEAD_DIM=128, NUM_SPLITS=16)
        for cache in (BF16, "*fp8e4nv"):
            rows = 1 << (s["heads"] + 2 * s["kv"] - 1).bit_length()
            yield f"rope+norm+store {name} cache {cache}", rot._rope_norm_store_kernel, dict(
                qkv_ptr=BF16, pos_ptr="*i64", inv_freq_ptr="*fp32", qw_ptr=BF16, kw_ptr=BF16, slot_ptr="*i64",
                kc_ptr=cache, vc_ptr=cache), ("eps",), dict(
                NUM_Q=s["heads"], NUM_KV=s["kv"], ROWS_PAD=rows, HALF=64, USE_NORM=True, STORE=True)
        for residual in (False, True):
            yield f"rmsnorm {name} residual {residual}", norm._rmsnorm_kernel, dict(
                x_ptr=BF16, res_ptr=BF16, w_ptr=BF16, out_ptr=BF16, res_out_ptr=BF16), ("eps",), dict(
                N=s["hidden"], BLOCK=s["hidden"], HAS_RESIDUAL=residual)
    yield "silu_and_mul", act._silu_mul_kernel, dict(x_ptr=BF16, out_ptr=BF16), (), dict(BLOCK=1024)


def compile_sm90(kernel, ptrs: dict, floats: tuple, consts: dict):
    """`kernel` compiled for sm_90 with these argument types."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    names = list(kernel.arg_names)
    sig = {n: "constexpr" if n in consts else ptrs.get(n, "fp32" if n in floats else "i32") for n in names}
    src = ASTSource(fn=kernel, signature=sig, constexprs={(names.index(k),): v for k, v in consts.items()})
    return triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4, "num_stages": 2})


def compile_all() -> None:
    for label, kernel, ptrs, floats, consts in variants():
        compiled = compile_sm90(kernel, ptrs, floats, consts)
        print(f"{label}: ok, {compiled.metadata.shared} B shared memory")


def test_kernels_compile_for_sm90():
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    run = subprocess.run([sys.executable, __file__], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.count(": ok") == sum(1 for _ in variants())


if __name__ == "__main__":
    compile_all()
