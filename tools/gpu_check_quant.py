#!/usr/bin/env python
"""GPU check of hymt.engine.quant: kernels against the torch reference at the real shapes,
then timings against bf16. Run on the GPU machine from the repository root:

    python tools/gpu_check_quant.py [--skip-timing]

(a) Correctness, bf16 activations, fresh random data per case, output poisoned with NaN first:
    int8 / int4 GEMV (M = 1), fused dequantize + dot (M = 2, 16, 64, 256), dequantize + GEMM
    (M = 512) against x.float() @ dequantize(W).T; the same int4 weights repacked for torch's
    tinygemm kernel, through IntWeightLinear (M = 1 to 2048); the per-token fp8 kernel against the torch
    quantizer; Fp8Linear's _scaled_mm path against its float emulation (M = 1, 7, 64, 512).
    PASS when relative L2 < 1e-2 (bf16 output rounding is ~4e-3) and nothing is NaN.
(b) Timing (CUDA-graph replays, median ms) of each projection shape of the 1.8B and 7B
    models: bf16 F.linear against int8 / int4 (Triton, our layout) / fp8 and the int4 layer
    as the int4 scheme runs it on CUDA (tg4: tinygemm up to TINYGEMM_MAX_M rows, then
    the Triton kernels on the same words) at M = 1 to 2048, with the weight-read
    bandwidth at M = 1.
(c) The Triton kernels reading tinygemm's words (tinygemm_kernels.py): their dequantize
    against our int4 dequantize; at M = 16 to 256 their fused kernel and dequantize +
    cuBLAS against bf16, our fused int4 kernel and tinygemm.
(d) Host time per eager call at M = 64 (what an eager prefill pays per projection).
Exit status 1 when (a) fails.
"""
from __future__ import annotations

import argparse
import sys
from functools import partial
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hymt.engine.quant import resolve_scheme  # noqa: E402
from hymt.engine.quant.fp8_linear import Fp8Linear  # noqa: E402
from hymt.engine.quant.fp8_weights import quantize_fp8_rows  # noqa: E402
from hymt.engine.quant.int_linear import IntWeightLinear  # noqa: E402
from hymt.engine.quant.int_weights import dequantize_int, quantize_int  # noqa: E402
from hymt.engine.quant.tinygemm import tinygemm_linear, to_tinygemm  # noqa: E402
from hymt.engine.quant.tinygemm_kernels import tinygemm_dequantize, tinygemm_mm  # noqa: E402
from hymt.engine.quant.triton_int_matmul import int_dequantize, int_linear_triton, int_mm  # noqa: E402

DEV = torch.device("cuda")
BF16 = torch.bfloat16
# (name, N, K) of each decoder projection; qkv / gate_up are the fused ones.
SHAPES = {
    "1.8B": [("qkv", 3072, 2048), ("o", 2048, 2048), ("gate_up", 12288, 2048), ("down", 2048, 6144)],
    "7B": [("qkv", 6144, 4096), ("o", 4096, 4096), ("gate_up", 28672, 4096), ("down", 4096, 14336)],
}


def rel(out: torch.Tensor, ref: torch.Tensor) -> float:
    if torch.isnan(out).any():
        return float("inf")
    return float((out.float() - ref.float()).norm() / ref.float().norm().clamp_min(1e-30))


def check_int(failures: list) -> None:
    print("\n== (a) int8 / int4 kernels, bf16, rel L2 against the float reference")
    for model, shapes in SHAPES.items():
        for name, n, k in shapes:
            for bits in (8, 4):
                w = torch.randn(n, k, device=DEV) * 0.02
                q = quantize_int(w, bits, 128, BF16)
                ref_w = dequantize_int(q, torch.float32)
                cells = []
                for m in (1, 2, 16, 64, 256, 512):
                    x = torch.randn(m, k, device=DEV, dtype=BF16)
                    out = int_linear_triton(x, q.qweight, q.scales, q.zeros, bits, 128)
                    err = rel(out, x.float() @ ref_w.T)
                    cells.append(f"M{m}={err:.1e}")
                    if not err < 1e-2:
                        failures.append(f"{model} {name} int{bits} M={m}: rel {err}")
                print(f"{model:>4} {name:>7} int{bits}: " + " ".join(cells))
                if bits == 4:
                    check_tinygemm(f"{model:>4} {name:>7}", q, ref_w, failures)


def tinygemm_layer(q) -> IntWeightLinear:
    """An int4 IntWeightLinear holding `q`, finalized: tinygemm up to TINYGEMM_MAX_M rows, then the
    Triton kernels on its words."""
    n, k = q.scales.shape[0], q.qweight.shape[1] * 2
    layer = IntWeightLinear(k, n, resolve_scheme("int4", "cuda"), device=DEV, dtype=BF16)
    layer.load_quantized_rows(0, q)
    layer.finalize()
    assert layer.tinygemm is not None, "tinygemm not used"
    return layer


def check_tinygemm(label: str, q, ref_w: torch.Tensor, failures: list) -> None:
    """The same int4 weights repacked for torch's kernel (and dequantized from that layout), against
    the same reference."""
    layer = tinygemm_layer(q)
    cells = []
    for m in (1, 2, 8, 9, 64, 256, 257, 2048):
        x = torch.randn(m, ref_w.shape[1], device=DEV, dtype=BF16)
        err = rel(layer(x), x.float() @ ref_w.T)
        cells.append(f"M{m}={err:.1e}")
        if not err < 1e-2:
            failures.append(f"{label} tinygemm M={m}: rel {err}")
    print(f"{label} tg4 : " + " ".join(cells))
    perm = layer.tinygemm_perm
    x = torch.randn(200, ref_w.shape[1], device=DEV, dtype=BF16)  # the fused kernel past the layer's own rows
    fused = rel(tinygemm_mm(x, layer.tinygemm, perm, ref_w.shape[0]), x.float() @ ref_w.T)
    deq = rel(tinygemm_dequantize(layer.tinygemm, perm, ref_w.shape[0], torch.float32), ref_w)
    print(f"{label} tg kernels ({perm}): fused M200 {fused:.1e}, dequantize {deq:.1e}")
    if not (fused < 1e-2 and deq < 1e-2):
        failures.append(f"{label} tg kernels: fused {fused}, dequantize {deq}")


def check_fp8(failures: list) -> None:
    from hymt.engine.quant.scaled_mm import quantize_per_token

    print("\n== (a) fp8: per-token kernel and _scaled_mm")
    x = torch.randn(333, 4096, device=DEV, dtype=BF16) * torch.logspace(-2, 1, 333, device=DEV, dtype=BF16)[:, None]
    q, s = quantize_per_token(x)
    q_ref, s_ref = quantize_fp8_rows(x)
    scale_err = float(((s - s_ref).abs() / s_ref).max())
    byte_share = float((q.view(torch.uint8) == q_ref.view(torch.uint8)).float().mean())
    print(f"per-token kernel: max scale rel diff {scale_err:.1e}, identical e4m3 bytes {byte_share * 100:.3f}%")
    if scale_err > 1e-6 or byte_share < 0.999:
        failures.append(f"per-token fp8 kernel: scale diff {scale_err}, bytes equal {byte_share}")
    for _, n, k in SHAPES["7B"]:
        layer = Fp8Linear(k, n, device=DEV, dtype=BF16)
        layer.load_float_rows(0, torch.randn(n, k, device=DEV) * 0.02)
        for m in (1, 7, 64, 512):
            x = torch.randn(m, k, device=DEV, dtype=BF16)
            xq, xs = quantize_fp8_rows(x)
            ref = (xq.float() * xs) @ layer.dequantized_weight(torch.float32).T
            err = rel(layer(x), ref)
            print(f"fp8 linear N={n} K={k} M={m}: rel {err:.1e}")
            if not err < 1e-2:
                failures.append(f"fp8 N={n} K={k} M={m}: rel {err}")


def ms(fn) -> float:
    """Median ms of `fn` replayed in a CUDA graph: the engine's decode steps are graphs, and an
    eager timing of a 10-microsecond kernel measures the launch, not the kernel."""
    import triton.testing

    return float(triton.testing.do_bench_cudagraph(fn, rep=20, return_mode="median"))


def time_all() -> None:
    print("\n== (b) projection time, median ms (bf16 F.linear vs quantized); GB/s = weight bytes read at M=1")
    header = f"{'shape':>12} {'M':>5} {'bf16':>8} {'int8':>8} {'int4':>8} {'fp8':>8} {'tg4':>8}"
    for model, shapes in SHAPES.items():
        print(f"\n-- {model}\n{header}")
        for name, n, k in shapes:
            w = torch.randn(n, k, device=DEV, dtype=BF16) * 0.02
            q8, q4 = quantize_int(w, 8, 128, BF16), quantize_int(w, 4, 128, BF16)
            fp8 = Fp8Linear(k, n, device=DEV, dtype=BF16)
            fp8.load_float_rows(0, w)
            tg = tinygemm_layer(q4)
            for m in (1, 4, 8, 16, 64, 256, 512, 2048):
                x = torch.randn(m, k, device=DEV, dtype=BF16)
                # partial, not lambda: each call binds this iteration's tensors
                t = [ms(partial(F.linear, x, w)),
                     ms(partial(int_linear_triton, x, q8.qweight, q8.scales, None, 8, 128)),
                     ms(partial(int_linear_triton, x, q4.qweight, q4.scales, q4.zeros, 4, 128)),
                     ms(partial(fp8, x)),
                     ms(partial(tg, x))]
                line = f"{name + ' ' + str(n) + 'x' + str(k):>12} {m:>5} " + " ".join(f"{v:8.4f}" for v in t)
                if m == 1:
                    weight_bytes = (n * k * 2, n * k * 1.03, n * k * 0.53, n * k, n * k * 0.53)
                    line += "   GB/s: " + " ".join(f"{b / v / 1e6:.0f}" for b, v in zip(weight_bytes, t))
                print(line)


def time_tg_kernels() -> None:
    print("\n== (c) tinygemm-layout kernels, median ms: dequantize (int4 ours / tg), then at M rows "
          "bf16 / int4 ours fused / tinygemm / tg fused / tg dequantize + cuBLAS")
    for model, shapes in SHAPES.items():
        print(f"\n-- {model}")
        for name, n, k in shapes:
            w = torch.randn(n, k, device=DEV, dtype=BF16) * 0.02
            q4 = quantize_int(w, 4, 128, BF16)
            layer = tinygemm_layer(q4)
            tg, perm = layer.tinygemm, layer.tinygemm_perm
            deq = [ms(partial(int_dequantize, q4.qweight, q4.scales, q4.zeros, 4, 128, k, BF16)),
                   ms(partial(tinygemm_dequantize, tg, perm, n, BF16))]
            print(f"{name + ' ' + str(n) + 'x' + str(k):>18} dequantize " + " ".join(f"{v:8.4f}" for v in deq)
                  + "   GB/s (bytes read + written): " + " / ".join(f"{n * k * 2.53 / v / 1e6:.0f}" for v in deq))
            for m in (16, 32, 64, 128, 256):
                x = torch.randn(m, k, device=DEV, dtype=BF16)
                t = [ms(partial(F.linear, x, w)),
                     ms(partial(int_mm, x, q4.qweight, q4.scales, q4.zeros, 4, 128)),
                     ms(partial(tinygemm_linear, x, tg)),
                     ms(partial(tinygemm_mm, x, tg, perm, n)),
                     ms(partial(dequantize_then_linear, x, tg, perm, n))]
                print(f"{'':>18} M={m:<4} fused " + " ".join(f"{v:8.4f}" for v in t))


def dequantize_then_linear(x: torch.Tensor, tg, perm, n: int) -> torch.Tensor:
    """tinygemm's words dequantized to bf16, then cuBLAS: the large-M path."""
    return F.linear(x, tinygemm_dequantize(tg, perm, n, BF16))


def launch_cost() -> None:
    """Host time per call, eager, 200 calls back to back: what a prefill outside CUDA graphs
    pays per projection (the GPU work at M = 64 is a few microseconds, so the host bounds it)."""
    import time

    print("\n== (d) eager host time per projection call, 1.8B qkv (gate_up for the fused kernel), M = 64, us")
    n, k = SHAPES["1.8B"][0][1:]
    w = torch.randn(n, k, device=DEV, dtype=BF16) * 0.02
    q4 = quantize_int(w, 4, 128, BF16)
    tg = to_tinygemm(q4)
    layer = tinygemm_layer(q4)
    n_wide, k_wide = SHAPES["1.8B"][2][1:]
    wide = tinygemm_layer(quantize_int(torch.randn(n_wide, k_wide, device=DEV) * 0.02, 4, 128, BF16))
    x = torch.randn(64, k, device=DEV, dtype=BF16)
    calls = {"bf16": lambda: F.linear(x, w),
             "int4 triton": lambda: int_linear_triton(x, q4.qweight, q4.scales, q4.zeros, 4, 128),
             "int4 tinygemm": lambda: tinygemm_linear(x, tg),
             "int4 layer, qkv (tg dequantize + cuBLAS)": lambda: layer(x),
             "int4 layer, gate_up (tg fused)": lambda: wide(x)}
    for name, fn in calls.items():
        for _ in range(20):
            fn()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(200):
            fn()
        host = (time.perf_counter() - t0) / 200 * 1e6
        torch.cuda.synchronize()
        print(f"{name:>42}: {host:6.1f} us")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--skip-timing", action="store_true")
    args = parser.parse_args()
    torch.manual_seed(0)
    print(f"{torch.cuda.get_device_name()} | torch {torch.__version__} | schemes: "
          f"{resolve_scheme('fp8', 'cuda').name} supported")
    failures: list[str] = []
    check_int(failures)
    check_fp8(failures)
    if not args.skip_timing:
        time_all()
        time_tg_kernels()
        launch_cost()
    print("\nFAIL:\n  " + "\n  ".join(failures) if failures else "\nPASS: every quant kernel check")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
