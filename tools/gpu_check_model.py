#!/usr/bin/env python
"""GPU check of the native Hunyuan dense model: correctness against transformers, kernel
health, and step timings. Run on the GPU machine from the repository root:

    python tools/gpu_check_model.py [--family HY-MT1.5-1.8B] [--skip-timing]

(a) Teacher-forced logits of the native model (bf16) against transformers'
    HunYuanDenseV1ForCausalLM on the SAME random weights at the family's full shape, written
    once to a temporary checkpoint (shards + index) that both load. Two native schedules:
    all prompts in one packed prefill step, and chunked prefill + mixed steps + 8 decode
    steps (paged prefill and split-K decode kernels). Metrics over every position: max / mean
    abs diff, relative L2 = ||a - b|| / ||b|| over all logits, top-1 agreement = share of
    positions with the same argmax. Reference: transformers in fp32; transformers' own bf16
    run gives the bf16 noise floor. PASS when, against transformers bf16, rel L2 < 2e-2 and
    top-1 >= 99%, or, against fp32, the native error is within the noise floor (rel L2 <=
    1.25x transformers-bf16's, top-1 >= transformers-bf16's - 1 point).
(b) Triton kernels (prefill with prefixes, decode with split-K and padding rows, fused
    RoPE/QK-norm/KV store, RMSNorm, SwiGLU) against the torch reference on random paged caches.
(c) Timing: one decode step (forward + logits) at batch 1/64/256/1024, context 64, eager and in
    a CUDA graph captured here; prefill of 10,240 tokens (256 x 40, 10 x 1024); attention
    kernels alone beside cuDNN SDPA on dense tensors. Informational (no pass/fail).
Exit status 1 when (a) or (b) fails.
"""
from __future__ import annotations

import argparse
import json
import math
import random
import sys
import tempfile
import time
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hymt.engine.batch import ScheduledSeq, StepBatch  # noqa: E402
from hymt.engine.layers import RotaryEmbedding, apply_rotary, paged_attention_torch, rms_norm, store_kv  # noqa: E402
from hymt.engine.loader import load_model  # noqa: E402
from hymt.engine.network import allocate_kv_cache  # noqa: E402
from hymt.engine.step_inputs import StepInputs, build_step_inputs  # noqa: E402

DEV = torch.device("cuda")
BLOCK = 16
KERNEL_DTYPE = torch.bfloat16  # dtype of the (b) kernel checks
FALLBACK_CONFIGS = {  # docs/reference/models.md §2.1, used when hymt.testing.real_shape_config is absent
    "HY-MT1.5-1.8B": dict(vocab_size=120818, hidden_size=2048, intermediate_size=6144, num_attention_heads=16,
                          num_key_value_heads=4, bos_token_id=120000, eos_token_id=120020, pad_token_id=120002,
                          rope_scaling={"type": "dynamic", "alpha": 1000.0, "factor": 1.0}),
    "HY-MT1.5-7B": dict(vocab_size=128167, hidden_size=4096, intermediate_size=14336, num_attention_heads=32,
                        num_key_value_heads=8, bos_token_id=127958, eos_token_id=127960, pad_token_id=127961,
                        rope_scaling={"alpha": 1000.0, "beta_fast": 32, "beta_slow": 1, "factor": 1.0, "mscale": 1.0,
                                      "mscale_all_dim": 1.0, "type": "dynamic"}),
}


def real_config(family: str) -> dict:
    try:
        from hymt.testing import real_shape_config

        return real_shape_config(family)
    except ImportError:
        base = dict(architectures=["HunYuanDenseV1ForCausalLM"], model_type="hunyuan_v1_dense", head_dim=128,
                    num_hidden_layers=32, max_position_embeddings=262144, rope_theta=10000.0, rms_norm_eps=1e-5,
                    hidden_act="silu", use_qk_norm=True, use_cla=False, attention_bias=False, mlp_bias=False,
                    tie_word_embeddings=True, torch_dtype="bfloat16")
        return {**base, **FALLBACK_CONFIGS[family]}


def table(title: str, header: list[str], rows: list[list]) -> None:
    cells = [header] + [[f"{c:.4g}" if isinstance(c, float) else str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    print(f"\n== {title}")
    for i, r in enumerate(cells):
        print("  ".join(c.rjust(w) for c, w in zip(r, widths)))
        if i == 0:
            print("  ".join("-" * w for w in widths))


# ---------------------------------------------------------------- (a) logits vs transformers
def write_random_checkpoint(cfg: dict, path: Path, seed: int = 0) -> None:
    """HF-named bf16 random weights in 2 GB shards + index, and config.json."""
    from safetensors.torch import save_file

    g = torch.Generator(device=DEV).manual_seed(seed)
    h, inter, d = cfg["hidden_size"], cfg["intermediate_size"], cfg["head_dim"]
    q, kv = cfg["num_attention_heads"] * d, cfg["num_key_value_heads"] * d

    def mat(*shape):
        return (torch.randn(*shape, generator=g, device=DEV) * 0.02).to(torch.bfloat16).cpu()

    def norm(n):
        return (1 + 0.1 * torch.randn(n, generator=g, device=DEV)).to(torch.bfloat16).cpu()

    shards, size = [], 0
    current = {"model.embed_tokens.weight": mat(cfg["vocab_size"], h), "model.norm.weight": norm(h)}
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        layer = {p + "input_layernorm.weight": norm(h), p + "post_attention_layernorm.weight": norm(h),
                 p + "self_attn.q_proj.weight": mat(q, h), p + "self_attn.k_proj.weight": mat(kv, h),
                 p + "self_attn.v_proj.weight": mat(kv, h), p + "self_attn.o_proj.weight": mat(h, q),
                 p + "self_attn.query_layernorm.weight": norm(d), p + "self_attn.key_layernorm.weight": norm(d),
                 p + "mlp.gate_proj.weight": mat(inter, h), p + "mlp.up_proj.weight": mat(inter, h),
                 p + "mlp.down_proj.weight": mat(h, inter)}
        current |= layer
        size += sum(t.numel() * 2 for t in layer.values())
        if size > 2e9:
            shards.append(current)
            current, size = {}, 0
    shards.append(current)
    weight_map = {}
    for i, shard in enumerate(shards):
        name = f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
        save_file(shard, path / name)
        weight_map |= {k: name for k in shard}
    (path / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    (path / "config.json").write_text(json.dumps(cfg, indent=1))


def native_logits(model, prompts: list[list[int]], chunked: bool) -> list[torch.Tensor]:
    """Teacher-forced logits per prompt, [len, vocab] fp32, through the paged cache."""
    blocks = [math.ceil(len(p) / BLOCK) for p in prompts]
    caches = allocate_kv_cache(model, sum(blocks) + 1, BLOCK, model.dtype, DEV)
    pool = list(range(1, sum(blocks) + 1))
    random.Random(0).shuffle(pool)
    tables = [tuple(pool.pop() for _ in range(n)) for n in blocks]
    done, out = [0] * len(prompts), [[] for _ in prompts]
    if chunked:  # two prefill chunks (second one mixed with the others' chunks), then 8 decodes
        plan = [[(i, (len(p) - 8) // 2) for i, p in enumerate(prompts)],
                [(i, len(p) - 8 - (len(p) - 8) // 2) for i, p in enumerate(prompts)]]
        plan += [[(i, 1) for i in range(len(prompts))] for _ in range(8)]
    else:
        plan = [[(i, len(p)) for i, p in enumerate(prompts)]]
    for step in plan:
        batch = StepBatch([ScheduledSeq(i, prompts[i][done[i]:done[i] + n], done[i], list(tables[i]), True)
                           for i, n in step])
        inputs = build_step_inputs(batch, BLOCK, DEV, all_logits=True)
        with torch.inference_mode():
            hidden = model(inputs.input_ids, inputs.metadata, caches)
            logits = model.compute_logits(hidden[inputs.metadata.logits_indices])
        for (i, n), part in zip(step, logits.split([n for _, n in step])):
            out[i].append(part)
            done[i] += n
    return [torch.cat(o) for o in out]


def compare(got: list[torch.Tensor], ref: list[torch.Tensor]) -> dict:
    a, b = torch.cat(got).float(), torch.cat(ref).float()
    diff = (a - b).abs()
    return dict(max_abs=diff.max().item(), mean_abs=diff.mean().item(),
                rel_l2=((a - b).norm() / b.norm()).item(),
                top1=(a.argmax(-1) == b.argmax(-1)).float().mean().item())


def check_logits(cfg: dict, num_prompts: int, workdir: Path) -> bool:
    from transformers import HunYuanDenseV1ForCausalLM

    t0 = time.perf_counter()
    write_random_checkpoint(cfg, workdir)
    print(f"wrote random checkpoint to {workdir} in {time.perf_counter() - t0:.1f} s")
    native = load_model(workdir, DEV, torch.bfloat16)
    print(f"native load_model: {native.load_stats.seconds:.2f} s for {native.load_stats.weight_bytes / 1e9:.2f} GB "
          "(page cache warm: the file was just written)")
    rng = random.Random(1)
    prompts = [[rng.randrange(cfg["vocab_size"]) for _ in range(rng.randint(40, 200))] for _ in range(num_prompts)]
    refs = {}
    for name, dtype in (("hf_fp32", torch.float32), ("hf_bf16", torch.bfloat16)):
        hf = HunYuanDenseV1ForCausalLM.from_pretrained(workdir, dtype=dtype).to(DEV).eval()
        if name == "hf_fp32":
            inv = hf.model.rotary_emb.inv_freq.float()
            print(f"inv_freq max |native - transformers| = {(native.rotary.inv_freq - inv).abs().max().item():.3g}")
        with torch.inference_mode():
            refs[name] = [hf(torch.tensor([p], device=DEV)).logits[0].float() for p in prompts]
        del hf
        torch.cuda.empty_cache()
    rows, ok = [], True
    floor = compare(refs["hf_bf16"], refs["hf_fp32"])
    rows.append(["transformers bf16 (noise floor)", "hf fp32", *floor.values(), "-"])
    for schedule in ("packed prefill", "chunked + decode"):
        got = native_logits(native, prompts, chunked=schedule != "packed prefill")
        vs_bf16, vs_fp32 = compare(got, refs["hf_bf16"]), compare(got, refs["hf_fp32"])
        strict = vs_bf16["rel_l2"] < 2e-2 and vs_bf16["top1"] >= 0.99
        noise = vs_fp32["rel_l2"] <= 1.25 * floor["rel_l2"] and vs_fp32["top1"] >= floor["top1"] - 0.01
        ok &= strict or noise
        rows.append([f"native {schedule}", "hf bf16", *vs_bf16.values(), "PASS" if strict else "-"])
        rows.append([f"native {schedule}", "hf fp32", *vs_fp32.values(), "PASS" if noise else "-"])
    n_pos = sum(len(p) for p in prompts)
    table(f"(a) teacher-forced logits, {num_prompts} prompts, {n_pos} positions, {cfg['num_hidden_layers']} layers",
          ["model", "reference", "max_abs", "mean_abs", "rel_l2", "top1", "verdict"], rows)
    print(f"(a) {'PASS' if ok else 'FAIL'}")
    return ok


# ---------------------------------------------------------------- (b) kernels vs torch reference
def paged_batch(lens, heads, kv, dim, seed=0, extra_cols=0):
    torch.manual_seed(seed)
    need = [math.ceil((s + n) / BLOCK) for s, n in lens]
    pool = list(range(sum(need) + 4))
    random.Random(seed).shuffle(pool)
    seqs = [ScheduledSeq(i, [0] * n, s, [pool.pop() for _ in range(b)], True)
            for i, ((s, n), b) in enumerate(zip(lens, need))]
    meta = build_step_inputs(StepBatch(seqs), BLOCK, DEV, num_cols=max(need) + extra_cols).metadata
    kc = torch.randn(len(pool) + sum(need), BLOCK, kv, dim, device=DEV).to(KERNEL_DTYPE)
    vc = torch.randn_like(kc)
    q = torch.randn(meta.positions.shape[0], heads, dim, device=DEV).to(KERNEL_DTYPE)
    return q, kc, vc, meta


def rel_err(out: torch.Tensor, ref: torch.Tensor) -> float:
    return ((out.float() - ref.float()).abs().max() / ref.float().abs().max().clamp_min(1e-6)).item()


def check_kernels(cfg: dict) -> bool:
    from hymt.engine.layers import triton_attention as ta
    from hymt.engine.layers.triton_activation import silu_and_mul_triton
    from hymt.engine.layers.triton_norm import rmsnorm_triton
    from hymt.engine.layers.triton_rotary import rope_norm_store_triton

    heads, kv, dim = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
    scale, rows = dim**-0.5, []
    for name, lens in (("prefill 64 x 40", [(0, 40)] * 64),
                       ("prefill prefix/chunk/decode mix",
                        [(0, 200), (64, 50), (300, 1), (17, 129), (0, 1), (1000, 77)]),
                       ("prefill 1 x 2048", [(0, 2048)])):
        q, kc, vc, meta = paged_batch(lens, heads, kv, dim)
        out = ta.paged_prefill(q, kc, vc, meta.query_start_loc, meta.seq_lens, meta.block_tables,
                               meta.prefill_items, scale)
        rows.append([name, rel_err(out, paged_attention_torch(q, kc, vc, meta, scale))])
    for bs, ctx in ((1, 4000), (8, 777), (64, 65), (256, 300), (1024, 64)):
        lens = [(random.Random(i).randint(1, ctx) - 1, 1) for i in range(bs)]
        q, kc, vc, meta = paged_batch(lens, heads, kv, dim, extra_cols=8)
        ref = paged_attention_torch(q, kc, vc, meta, scale)
        splits = ta.decode_num_splits(bs, kv, meta.block_tables.shape[1] * BLOCK, 64, DEV)
        rows.append([f"decode bs {bs} ctx<={ctx} splits {splits}",
                     rel_err(ta.paged_decode(q, kc, vc, meta.seq_lens, meta.block_tables, scale), ref)])
    q, kc, vc, meta = paged_batch([(30, 1), (5, 1)], heads, kv, dim)
    pad_out = ta.paged_decode(torch.cat([q, q]), kc, vc, torch.cat([meta.seq_lens, torch.zeros_like(meta.seq_lens)]),
                              torch.cat([meta.block_tables, torch.zeros_like(meta.block_tables)]), scale, num_splits=4)
    rows.append(["decode padding rows are zero", float(pad_out[2:].abs().max().item())])
    t = 300
    qkv = torch.randn(t, (heads + 2 * kv) * dim, device=DEV).to(KERNEL_DTYPE)
    pos = torch.randint(0, 4096, (t,), device=DEV)
    slots = torch.randperm(t * 2, device=DEV)[:t]
    slots[::7] = -1
    rot = RotaryEmbedding(dim, 11158839.93, device=DEV)
    qw = (1 + 0.1 * torch.randn(dim, device=DEV)).to(KERNEL_DTYPE)
    kw = (1 + 0.1 * torch.randn(dim, device=DEV)).to(KERNEL_DTYPE)
    ref = qkv.clone()
    cos, sin = rot.cos_sin(pos)
    qr = rms_norm(apply_rotary(ref[:, : heads * dim].view(t, heads, dim), cos, sin), qw, 1e-5)
    kr = rms_norm(apply_rotary(ref[:, heads * dim:(heads + kv) * dim].view(t, kv, dim), cos, sin), kw, 1e-5)
    kc_ref, vc_ref = (torch.zeros(t * 2 // BLOCK + 1, BLOCK, kv, dim, device=DEV, dtype=KERNEL_DTYPE) for _ in "kv")
    store_kv(kr, ref[:, (heads + kv) * dim:].view(t, kv, dim), kc_ref, vc_ref, slots)
    kc, vc = torch.zeros_like(kc_ref), torch.zeros_like(vc_ref)
    rope_norm_store_triton(qkv, pos, rot.inv_freq, qw, kw, 1e-5, heads, kv, dim, slots, kc, vc)
    rows.append(["rope + qk-norm (q)", rel_err(qkv[:, : heads * dim].view(t, heads, dim), qr)])
    rows.append(["rope + qk-norm + store (k cache)", rel_err(kc, kc_ref)])
    rows.append(["kv store (v cache)", rel_err(vc, vc_ref)])
    x = torch.randn(t, cfg["hidden_size"], device=DEV).to(KERNEL_DTYPE)
    r = torch.randn(t, cfg["hidden_size"], device=DEV).to(KERNEL_DTYPE)
    w = (1 + 0.1 * torch.randn(cfg["hidden_size"], device=DEV)).to(KERNEL_DTYPE)
    out, _ = rmsnorm_triton(x, w, 1e-5, r)
    rows.append(["add + rmsnorm", rel_err(out, rms_norm(x + r, w, 1e-5))])
    gu = torch.randn(t, 2 * cfg["intermediate_size"], device=DEV).to(KERNEL_DTYPE)
    g, u = gu.chunk(2, -1)
    rows.append(["silu(gate) * up", rel_err(silu_and_mul_triton(gu), F.silu(g) * u)])
    ok = all(err < 2e-2 for _, err in rows)
    table(f"(b) Triton kernels vs torch reference ({KERNEL_DTYPE}): max |diff| / max |ref|",
          ["kernel", "rel_err"], rows)
    print(f"(b) {'PASS' if ok else 'FAIL'} (threshold 2e-2)")
    return ok


# ---------------------------------------------------------------- (c) timing
def gpu_ms(fn, iters: int = 20) -> tuple[float, float]:
    """(GPU ms per call, host ms per call without sync) after warm-up."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t0 = time.perf_counter()
    start.record()
    for _ in range(iters):
        fn()
    host = (time.perf_counter() - t0) * 1e3 / iters
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / iters, host


def packed_inputs(model, lens: list[tuple[int, int]]) -> tuple[StepInputs, list]:
    """Random tokens for sequences computing n tokens after s cached ones ((s, n) each), on
    consecutive blocks of a cache of their own."""
    per = [math.ceil((s + n) / BLOCK) for s, n in lens]
    caches = allocate_kv_cache(model, sum(per), BLOCK, model.dtype, DEV)
    seqs, first = [], 0
    for i, ((s, n), blocks) in enumerate(zip(lens, per)):
        tokens = torch.randint(0, model.vocab_size, (n,)).tolist()
        seqs.append(ScheduledSeq(i, tokens, s, list(range(first, first + blocks)), True))
        first += blocks
    return build_step_inputs(StepBatch(seqs), BLOCK, DEV), caches


def time_decode(model, batch: int, context: int) -> list:
    """One decode step (forward + logits) at `batch` rows: eager, and replayed in a CUDA graph."""
    inputs, caches = packed_inputs(model, [(context, 1)] * batch)

    def step():
        return model.compute_logits(model(inputs.input_ids, inputs.metadata, caches))

    with torch.inference_mode():
        eager, host = gpu_ms(step)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            step()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            step()
        replay, _ = gpu_ms(graph.replay)
    return [f"decode bs {batch} ctx {context}", eager, host, replay, batch / replay * 1e3]


def time_prefill(model, n_seq: int, length: int) -> list:
    """One prefill step of n_seq fresh prompts of `length` tokens (forward + their logits)."""
    inputs, caches = packed_inputs(model, [(0, length)] * n_seq)
    meta = inputs.metadata

    def step():
        return model.compute_logits(model(inputs.input_ids, meta, caches)[meta.logits_indices])

    with torch.inference_mode():
        ms, host = gpu_ms(step, iters=5)
    return [f"prefill {n_seq} x {length}", ms, host, "-", n_seq * length / ms * 1e3]


def time_steps(model) -> None:
    # One function per measurement: each step's closure binds its own inputs, and its
    # caches are freed when the function returns.
    rows = [time_decode(model, batch, 64) for batch in (1, 64, 256, 1024)]
    rows += [time_prefill(model, n_seq, length) for n_seq, length in ((256, 40), (10, 1024))]
    table("(c) step timing (forward + logits), ms", ["step", "eager gpu", "eager host", "graph", "tok/s (best)"], rows)


def time_attention(cfg: dict) -> None:
    from hymt.engine.layers import triton_attention as ta

    heads, kv, dim = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
    rows = []
    q, kc, vc, meta = paged_batch([(63, 1)] * 1024, heads, kv, dim)
    ms, _ = gpu_ms(lambda: ta.paged_decode(q, kc, vc, meta.seq_lens, meta.block_tables, dim**-0.5))
    qd = torch.randn(1024, heads, 1, dim, device=DEV).bfloat16()
    kd = torch.randn(1024, kv, 64, dim, device=DEV).bfloat16()
    sdpa, _ = gpu_ms(lambda: F.scaled_dot_product_attention(qd, kd, kd, enable_gqa=True))
    rows.append(["decode 1024 seqs, kv 64 (one layer)", ms, sdpa])
    q, kc, vc, meta = paged_batch([(0, 40)] * 256, heads, kv, dim)
    ms, _ = gpu_ms(lambda: ta.paged_prefill(q, kc, vc, meta.query_start_loc, meta.seq_lens, meta.block_tables,
                                            meta.prefill_items, dim**-0.5))
    qp = torch.randn(256, heads, 40, dim, device=DEV).bfloat16()
    kp = torch.randn(256, kv, 40, dim, device=DEV).bfloat16()
    sdpa, _ = gpu_ms(lambda: F.scaled_dot_product_attention(qp, kp, kp, is_causal=True, enable_gqa=True))
    rows.append(["prefill 256 x 40 causal (one layer)", ms, sdpa])
    table("(c) attention kernels, ms per layer (SDPA on dense tensors, no paging: docs/reference/engine.md §3.3)",
          ["shape", "hymt triton (paged)", "sdpa default (dense)"], rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--family", default="HY-MT1.5-1.8B", choices=sorted(FALLBACK_CONFIGS))
    ap.add_argument("--prompts", type=int, default=16)
    ap.add_argument("--layers", type=int, default=None, help="override num_hidden_layers (quicker runs)")
    ap.add_argument("--skip-logits", action="store_true")
    ap.add_argument("--skip-timing", action="store_true")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA device", file=sys.stderr)
        return 2
    cfg = real_config(args.family)
    if args.layers:
        cfg["num_hidden_layers"] = args.layers
    print(f"{args.family}: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    ok = check_kernels(cfg)
    if not args.skip_logits:
        with tempfile.TemporaryDirectory(prefix="hymt-gpu-check-") as tmp:
            ok &= check_logits(cfg, args.prompts, Path(tmp))
    if not args.skip_timing:
        model = load_model(cfg, DEV, torch.bfloat16, random_weights=True)
        time_steps(model)
        time_attention(cfg)
    print(f"\noverall: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
