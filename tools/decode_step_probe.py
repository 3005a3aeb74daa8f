"""Where a batch-1 decode step's time goes, found by taking work out of it (GPU only).

    PYTHONPATH=. python tools/decode_step_probe.py [--family HY-MT1.5-1.8B] [--variants base,splits1,...]

Each variant runs in a fresh process: it patches the model's layers, builds the native engine
on random real-shape weights (which captures the CUDA graphs with the patch in place), runs
4 + 12 requests of 60 prompt tokens and 32 greedy tokens one at a time, and prints the p50
request time, time to the first token and decode step. A profiler trace cannot give these
costs: kernels that start early and wait for the previous one (programmatic dependent launch)
carry their neighbour's time.

Variants (join several with "+"); the `no_*` ones drop work, so their outputs are wrong and
their times bound what fusing that work away could save:
    base        the engine as it is
    splits1     decode attention in one split per KV head (no split reduce kernel)
    o_gemv      the O projection at 1-4 rows as a Triton GEMV instead of cuBLAS
    cublaslt    every GEMM through cuBLASLt (torch.backends.cuda.preferred_blas_library)
    no_attn     no attention kernels
    no_o        no O projection
    no_norm     no RMSNorm kernels (the residual adds go with them)
    no_swiglu   no SwiGLU kernel
    no_rope     no RoPE + QK-norm + KV-store kernel
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

import torch
import triton
import triton.language as tl

VARIANTS = ("base", "splits1", "o_gemv", "cublaslt", "no_attn", "no_o", "no_norm", "no_swiglu", "no_rope")
DEFAULT = "base,splits1,o_gemv,cublaslt,no_o,no_norm+no_swiglu+no_rope,no_norm+no_swiglu+no_rope+no_attn+no_o,base"


@triton.jit
def _gemv_kernel(x_ptr, w_ptr, out_ptr, N, K, stride_xm, stride_wn, stride_om,
                 M: tl.constexpr, M_PAD: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    n = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    n_ok = n < N
    m = tl.arange(0, M_PAD)
    acc = tl.zeros([M_PAD, BLOCK_N], tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + tl.arange(0, BLOCK_K)
        w = tl.load(w_ptr + n.to(tl.int64)[:, None] * stride_wn + k[None, :], mask=n_ok[:, None], other=0.0)
        xs = tl.load(x_ptr + m[:, None] * stride_xm + k[None, :], mask=(m < M)[:, None], other=0.0)
        acc += tl.sum(xs.to(tl.float32)[:, None, :] * w.to(tl.float32)[None, :, :], axis=2)
    tl.store(out_ptr + m[:, None] * stride_om + n[None, :], acc.to(out_ptr.dtype.element_ty),
             mask=(m < M)[:, None] & n_ok[None, :])


def _gemv(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """x [M, K] @ weight [N, K].T for M <= 4: each program streams 4 weight rows once."""
    m, k = x.shape
    n = weight.shape[0]
    x = x.contiguous()
    out = torch.empty((m, n), dtype=x.dtype, device=x.device)
    _gemv_kernel[(triton.cdiv(n, 4),)](x, weight, out, n, k, x.stride(0), weight.stride(0), out.stride(0),
                                       M=m, M_PAD=1 << (m - 1).bit_length(), BLOCK_N=4, BLOCK_K=512, num_warps=4)
    return out


def _patch(variant: str) -> None:
    from hymt.engine.layers import attention, linear, rmsnorm, triton_attention, triton_rotary
    from hymt.engine.network import hunyuan_dense

    def square(self) -> bool:  # the O projection is the decoder's only square weight
        return self.in_features == self.out_features

    original = linear.Linear.forward
    if variant == "splits1":
        triton_attention.decode_num_splits = lambda *a, **k: 1
    elif variant == "o_gemv":
        linear.Linear.forward = lambda self, x: _gemv(x, self.weight) if square(self) and x.shape[0] <= 4 \
            else original(self, x)
    elif variant == "cublaslt":
        torch.backends.cuda.preferred_blas_library("cublaslt")
    elif variant == "no_attn":
        attention.Attention.forward = lambda self, q, k, v, kv_cache, meta, kv_stored=False: q
    elif variant == "no_o":
        linear.Linear.forward = lambda self, x: x if square(self) else original(self, x)
    elif variant == "no_norm":
        rmsnorm.RMSNorm.forward = lambda self, x, residual=None: x if residual is None else (x, x)
    elif variant == "no_swiglu":
        hunyuan_dense.silu_and_mul = lambda gate_up: gate_up[:, : gate_up.shape[1] // 2]
    elif variant == "no_rope":
        triton_rotary.rope_norm_store_triton = lambda *a, **k: None
    elif variant != "base":
        raise SystemExit(f"unknown variant {variant!r}; valid: {', '.join(VARIANTS)}")


def _measure(family: str, variants: str) -> str:
    for variant in variants.split("+"):
        _patch(variant)
    from hymt.engine.config import EngineConfig
    from hymt.engine.native_engine import NativeEngine
    from hymt.engine.sampling import SamplingParams
    from hymt.testing import real_shape_config

    # Small step sizes start the engine sooner; a batch-1 request (60-token prefill, then
    # decode at batch 1) runs the same graphs as with the defaults.
    config = EngineConfig(gpu_memory_gb=30 if "7B" in family else 12, max_num_seqs=64, max_num_batched_tokens=512)
    engine = NativeEngine(real_shape_config(family), config, device="cuda", dtype=torch.bfloat16, random_weights=True)
    generator = torch.Generator().manual_seed(0)
    params = SamplingParams(max_tokens=32, ignore_eos=True)

    def one() -> tuple[float, float, list[float]]:
        prompt = torch.randint(1000, 100000, (60,), generator=generator).tolist()
        torch.cuda.synchronize()
        start = time.perf_counter()
        engine.add_request(prompt, params)
        first, steps = None, []
        while engine.has_unfinished():
            step_start = time.perf_counter()
            outputs = engine.step()
            steps.append(time.perf_counter() - step_start)
            if first is None and any(o.new_token_ids for o in outputs):
                first = time.perf_counter() - start
        torch.cuda.synchronize()
        return first or 0.0, time.perf_counter() - start, steps

    for _ in range(4):
        one()
    runs = [one() for _ in range(12)]
    engine.close()
    return (f"{family:14s} {variants:44s} request p50 {statistics.median(r[1] for r in runs) * 1e3:6.1f} ms  "
            f"first token {statistics.median(r[0] for r in runs) * 1e3:5.2f} ms  "
            f"decode step p50 {statistics.median(s for r in runs for s in r[2][2:]) * 1e3:5.3f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--family", default="HY-MT1.5-1.8B")
    parser.add_argument("--variants", default=DEFAULT, help="comma-separated; '+' joins patches in one run")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # the child process's variant
    args = parser.parse_args()
    if args.one:
        print(_measure(args.family, args.one), flush=True)
        return
    for variants in args.variants.split(","):
        done = subprocess.run([sys.executable, __file__, "--family", args.family, "--one", variants],
                              capture_output=True, text=True, timeout=120)
        print(done.stdout.strip() or f"{variants}: failed\n{done.stderr[-800:]}", flush=True)


if __name__ == "__main__":
    main()
