"""GPU probe of run 11 (docs/BENCHMARKS.md, "Runs 11-12"): int4 unpacking variants and launch
costs of the tinygemm-layout kernels. Kept as the record of that run, not as a tool: it ran
as tools/probe/run.py beside tgv.py (tgv.patch applied to tinygemm_kernels.py of fc654b4: a MODE constexpr:
0 int-to-float conversion, 1 the float32 bit trick, 2 the bf16 bit trick; and a copy of the
fused kernel with scalar instead of tuple constexprs), `cd tools/probe && python3 run.py`."""
import itertools, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2])); sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import torch, triton, triton.language as tl
import torch.nn.functional as F
from gpu_check_quant import tinygemm_layer, rel, ms, DEV, BF16
from hymt.engine.quant.int_weights import quantize_int, dequantize_int
from hymt.engine.quant.tinygemm_kernels import tinygemm_mm, tinygemm_dequantize, _consts, _tg_mm_kernel
from hymt.engine.quant.triton_int_matmul import int_mm
from hymt.engine.quant.tinygemm import tinygemm_linear
import tgv

def run_mm(x, tg, perm, n, mode, bn=32, warps=4, stages=3, bm=None):
    m, k = x.shape
    bm = bm or (16 if m <= 16 else (32 if m <= 32 else 64))
    out = x.new_empty((m, n)); saz = tg.scales_and_zeros
    c = _consts(tg, perm); c["BLOCK_N"] = bn
    grid = (triton.cdiv(n, bn), triton.cdiv(m, bm))
    tgv._tg_mm_kernel[grid](x, tg.packed, saz, out, m, n, k, x.stride(0), out.stride(0), saz.stride(0),
                            BLOCK_M=bm, MODE=mode, num_warps=warps, num_stages=stages, **c)
    return out

def run_deq(tg, perm, n, mode, dtype=BF16):
    saz = tg.scales_and_zeros; kk = saz.shape[0] * tg.group_size
    out = torch.empty((n, kk), device=DEV, dtype=dtype)
    c = _consts(tg, perm)
    tgv._tg_dequant_kernel[(triton.cdiv(n, 32), kk // 128)](tg.packed, saz, out, n, kk, out.stride(0), saz.stride(0), MODE=mode, **c)
    return out

SHAPES = [("1.8B gate_up", 12288, 2048), ("1.8B down", 2048, 6144), ("7B qkv", 6144, 4096), ("7B o", 4096, 4096),
          ("7B gate_up", 28672, 4096), ("7B down", 4096, 14336)]
torch.manual_seed(0)
print(torch.cuda.get_device_name(), torch.__version__, triton.__version__)
print("== correctness, rel L2 vs float reference (modes 0 I2F, 1 fp32 magic, 2 bf16 magic)")
layers = {}
for name, n, k in SHAPES:
    w = torch.randn(n, k, device=DEV) * 0.02
    q = quantize_int(w, 4, 128, BF16); ref = dequantize_int(q, torch.float32)
    layer = tinygemm_layer(q); layers[name] = (layer, w.to(BF16), n, k)
    cells = []
    for mode in (0, 1, 2):
        for m in (16, 64, 200):
            x = torch.randn(m, k, device=DEV, dtype=BF16)
            cells.append(f"m{mode} M{m} {rel(run_mm(x, layer.tinygemm, layer.tinygemm_perm, n, mode), x.float() @ ref.T):.1e}")
        cells.append(f"m{mode} deq {rel(run_deq(layer.tinygemm, layer.tinygemm_perm, n, mode, torch.float32), ref):.1e}")
    print(name, " | ".join(cells))
print("== timing, median ms (CUDA graph); fused configs (BLOCK_N, warps, stages)")
configs = list(itertools.product((32, 64), (4, 8), (3, 4)))
for name, (layer, wb, n, k) in layers.items():
    tg, perm = layer.tinygemm, layer.tinygemm_perm
    d = [ms(lambda: run_deq(tg, perm, n, mode)) for mode in (0, 1, 2)]
    print(f"-- {name} {n}x{k}: dequant m0/m1/m2 " + " ".join(f"{v:.4f}" for v in d))
    for m in (16, 32, 64, 128):
        x = torch.randn(m, k, device=DEV, dtype=BF16)
        base = {"bf16": ms(lambda: F.linear(x, wb)),
                "tinygemm": ms(lambda: tinygemm_linear(x, tg)),
                "deq0+mm": ms(lambda: F.linear(x, run_deq(tg, perm, n, 0))), "deq2+mm": ms(lambda: F.linear(x, run_deq(tg, perm, n, 2)))}
        best = {}
        for mode in (0, 1, 2):
            times = {cfg: ms(lambda: run_mm(x, tg, perm, n, mode, *cfg)) for cfg in configs}
            cfg = min(times, key=times.get)
            best[mode] = (times[(32, 4, 3)], cfg, times[cfg])
        print(f"   M={m:<4}" + " ".join(f"{a} {b:.4f}" for a, b in base.items())
              + " | " + " | ".join(f"m{mo} cur {c:.4f} best {cfg} {t:.4f}" for mo, (c, cfg, t) in best.items()))
print("== eager host time per call, 1.8B gate_up, M = 64, us")
layer, wb, n, k = layers["1.8B gate_up"]
tg, perm = layer.tinygemm, layer.tinygemm_perm
x = torch.randn(64, k, device=DEV, dtype=BF16)
out = x.new_empty((64, n)); saz = tg.scales_and_zeros; c = _consts(tg, perm)
S = dict(S0=4, S1=4, S2=2, S3=4); P = dict(zip(("P0", "P1", "P2", "P3"), c["K_ORDER"]))
cs = {kk: v for kk, v in c.items() if kk not in ("SLOT_SHAPE", "K_ORDER")}
grid = (triton.cdiv(n, 32), 1)
@triton.jit
def _empty(x_ptr, N, A: tl.constexpr):
    pass
calls = {
    "F.linear bf16": lambda: F.linear(x, wb),
    "empty triton kernel": lambda: _empty[(1,)](x, 1, A=1),
    "tinygemm_mm (product)": lambda: tinygemm_mm(x, tg, perm, n),
    "_tg_mm_kernel direct, cached kwargs": lambda: _tg_mm_kernel[grid](x, tg.packed, saz, out, 64, n, k, x.stride(0), out.stride(0), saz.stride(0), BLOCK_M=64, num_warps=4, num_stages=3, **c),
    "scalar-constexpr kernel direct": lambda: tgv._tg_mm_kernel_s[grid](x, tg.packed, saz, out, 64, n, k, x.stride(0), out.stride(0), saz.stride(0), BLOCK_M=64, MODE=0, num_warps=4, num_stages=3, **cs, **S, **P),
    "layer(x)": lambda: layer(x),
}
for label, fn in calls.items():
    for _ in range(20): fn()
    torch.cuda.synchronize(); t0 = time.perf_counter()
    for _ in range(300): fn()
    host = (time.perf_counter() - t0) / 300 * 1e6; torch.cuda.synchronize()
    print(f"{label:>40}: {host:6.1f} us")
