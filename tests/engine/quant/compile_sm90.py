"""Compiles the int4 matmul kernels (and the int8 one, as a control) for an H100/H200 (sm_90) on
this machine, no GPU needed, and prints how each loads its weights and how many int-to-float
conversions it has, as JSON:
{kernel: {"byte_loads": n, "cp_async": n, "vector_loads": n, "int_to_float": n}}.

Run in a process of its own: the test suite imports triton under its interpreter, which
cannot compile. The divisibility hints are the ones Triton's launcher gives arguments that
are multiples of 16 (every pointer, size and stride here is, at the real shapes).
"""
from __future__ import annotations

import json
import re

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

from hymt.engine.quant import tinygemm_kernels, triton_int_matmul

ALIGNED = {"x_ptr", "qw_ptr", "words_ptr", "s_ptr", "z_ptr", "saz_ptr", "out_ptr",
           "N", "K", "stride_xm", "stride_qw", "stride_s", "stride_om", "stride_o", "stride_sg"}
TILE = {"TILE_N": 8, "TILE_K": 128, "TILE_BYTES": 512, "ROW_BYTES": 64, "GROUP": 128,
        "SLOT_SHAPE": (4, 4, 2, 4), "K_ORDER": (2, 4, 1, 3)}  # torch's CUDA packer's order
INT4 = {"BITS": 4, "HAS_ZERO": True, "GROUP": 128}
KERNELS = {  # name: (kernel, pointer dtypes, constexprs)
    "int_mm": (triton_int_matmul._int_mm_kernel, {"qw_ptr": "*u8"},
               {**INT4, "BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 128}),
    "int8_mm": (triton_int_matmul._int_mm_kernel, {"qw_ptr": "*i8"},
                {"BITS": 8, "HAS_ZERO": False, "GROUP": 128, "BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 128}),
    "int_dequant": (triton_int_matmul._int_dequant_kernel, {"qw_ptr": "*u8"}, {**INT4, "BLOCK_N": 32, "BLOCK_K": 128}),
    "tg_mm": (tinygemm_kernels._tg_mm_kernel, {"words_ptr": "*i32"}, {**TILE, "BLOCK_M": 16, "BLOCK_N": 32}),
    "tg_mm_wide": (tinygemm_kernels._tg_mm_kernel, {"words_ptr": "*i32"}, {**TILE, "BLOCK_M": 64, "BLOCK_N": 64}),
    "tg_dequant": (tinygemm_kernels._tg_dequant_kernel, {"words_ptr": "*i32"}, {**TILE, "BLOCK_N": 32}),
}


def weight_loads(kernel, pointers: dict, constexprs: dict) -> dict:
    names = kernel.arg_names
    signature = {n: "constexpr" if n in constexprs else pointers.get(n, "*bf16" if n.endswith("_ptr") else "i32")
                 for n in names}
    attrs = {(names.index(n),): [["tt.divisibility", 16]] for n in names if n in ALIGNED}
    source = ASTSource(fn=kernel, signature=signature, constexprs=constexprs, attrs=attrs)
    ptx = triton.compile(source, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4, "num_stages": 3}).asm["ptx"]
    return {"byte_loads": len(re.findall(r"ld\.global(?:\.\w+)*\.[bu]8\b", ptx)),
            "cp_async": len(re.findall(r"cp\.async\.c[ag]\.shared\.global", ptx)),
            "vector_loads": len(re.findall(r"ld\.global(?:\.\w+)*\.v[24]\.", ptx)),
            "int_to_float": len(re.findall(r"cvt\.rn\.(?:f32|f16|bf16)\.[us](?:8|16|32)\b", ptx))}


if __name__ == "__main__":
    print(json.dumps({name: weight_loads(*spec) for name, spec in KERNELS.items()}))
