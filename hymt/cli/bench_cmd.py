"""`hymt bench`: measure the native engine (and transformers beside it), or load-test a server.

Offline: `hymt bench --random-weights --family HY-MT1.5-1.8B --baseline transformers`
Server:  `hymt bench --server http://127.0.0.1:8000 --concurrency 64 --num-requests 2000`
"""
from __future__ import annotations

import argparse
import shlex
import sys
from dataclasses import replace
from pathlib import Path

from hymt.cli.engine_args import add_engine_arguments, engine_overrides
from hymt.engine.dtypes import DTYPE_CHOICES

_DEFAULTS: dict = {}  # the parser's defaults, for rebuilding a command line


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "bench", help="benchmark the engine (throughput, batch-1 latency, memory) or a running server",
        description="Offline: native-engine throughput, batch-1 latency and peak memory, optionally against "
                    "transformers on the same weights. With --server: concurrent clients against a hymt server.",
    )
    src = p.add_argument_group("model")
    src.add_argument("--model", help="hub id or local checkpoint dir")
    src.add_argument("--random-weights", action="store_true", help="real-shape random weights (no download)")
    src.add_argument("--family", help="family whose real shape --random-weights uses, e.g. HY-MT1.5-1.8B")
    w = p.add_argument_group("workload")
    w.add_argument("--num-requests", type=int, default=None, help="requests (offline default 2000, server 256)")
    w.add_argument("--prompt-len-min", type=int, default=40)
    w.add_argument("--prompt-len-max", type=int, default=80)
    w.add_argument("--output-len", type=int, default=32, help="answer tokens, forced (ignore_eos)")
    w.add_argument("--batch1-requests", type=int, default=20, help="single requests of the latency run")
    w.add_argument("--warmup-requests", type=int, default=256, help="untimed native requests first")
    w.add_argument("--seed", type=int, default=0, help="prompt generator and engine seed")
    w.add_argument("--closed-loop", default="", metavar="N[,N...]",
                   help="also run with N requests in flight, the next submitted as each finishes (as N "
                        "server clients do); a comma list (e.g. 32,256) runs each in turn")
    e = p.add_argument_group("native engine")
    e.add_argument("--device")
    e.add_argument("--dtype", choices=DTYPE_CHOICES,
                   help="model dtype (default auto: bfloat16 on CUDA, float32 on CPU)")
    add_engine_arguments(e)
    q = p.add_argument_group("quantization comparison")
    q.add_argument("--compare-quantization", metavar="LIST",
                   help="run each scheme of a comma list (bf16,int8,int4,fp8) on the same weights: memory, "
                        "throughput, batch-1 latency and teacher-forced logits error against bf16")
    q.add_argument("--quality-prompts", type=int, default=64, help="prompts of the logits comparison")
    b = p.add_argument_group("baselines")
    b.add_argument("--baseline", choices=("none", "transformers"), default="none")
    b.add_argument("--baseline-requests", type=int, default=20, help="requests of transformers generate() batch 1")
    b.add_argument("--baseline-batch-size", type=int, default=64, help="batch of padded generate()")
    s = p.add_argument_group("server load (--server)")
    s.add_argument("--server", metavar="URL", help="drive a running hymt server instead of an engine")
    s.add_argument("--concurrency", type=int, default=16)
    s.add_argument("--api-key")
    s.add_argument("--src", default="en")
    s.add_argument("--tgt", default="zh")
    s.add_argument("--words", type=int, default=40, help="words per request text")
    s.add_argument("--client-processes", type=int, default=0,
                   help="load-generator processes (default 0: one per 64 clients, at most half the cores)")
    s.add_argument("--wait-workers", type=int, default=0, metavar="N",
                   help="first wait until N HTTP workers of the server report their model ready in /metrics "
                        "(hymt serve --http-workers N; 1 for one process; an error if they do not in time); "
                        "0: start at once")
    s.add_argument("--time-limit", type=float, default=600.0, help="seconds; no new request after it")
    s.add_argument("--timeout", type=float, default=120.0, help="per-request seconds")
    p.add_argument("--peer-results", metavar="PATH",
                   help="llama.cpp rows written by tools/llamacpp/run_peer.py, printed beside hymt's "
                        "(batch 1 and each --closed-loop concurrency) and kept in the JSON")
    p.add_argument("--json", metavar="PATH", help="write the full results as JSON")
    p.set_defaults(func=run)
    _DEFAULTS.update(vars(p.parse_args([])))


def command_line(args: argparse.Namespace) -> str:
    """The command as typed when run from the shell; else (called in-process, e.g. tests) the
    equivalent command rebuilt from the parsed options. Engine settings taken from the
    environment (HYMT_OVERLAP=0, ...) come first, as they would be typed."""
    from hymt.engine.config import env_overrides_set

    env = [f"{name}={shlex.quote(value)}" for name, value in env_overrides_set().items()]
    argv = sys.argv
    if argv and Path(argv[0]).name in ("hymt", "__main__.py") and "bench" in argv[1:]:
        return " ".join([*env, "hymt " + shlex.join(argv[1:])])
    parts = ["hymt", "bench"]
    for name, value in sorted(vars(args).items()):
        if name in ("func", "command", "verbose") or value in (None, False) or _DEFAULTS.get(name) == value:
            continue
        flag = "--" + name.replace("_", "-")
        parts += [flag] if value is True else [flag, str(value)]
    return " ".join([*env, shlex.join(parts)])


def run(args: argparse.Namespace) -> int:
    command = command_line(args)
    if args.peer_results and (args.server or args.compare_quantization):
        from hymt.errors import InvalidInputError

        raise InvalidInputError("--peer-results goes with an offline run, not with --server or "
                                "--compare-quantization", field="peer_results")
    if args.server:
        return _run_server(args, command)
    return _run_offline(args, command)


def _run_offline(args: argparse.Namespace, command: str) -> int:
    from hymt.bench.options import BenchOptions
    from hymt.bench.peer import read_peer_results
    from hymt.bench.report import format_bench
    from hymt.bench.runner import run_bench
    from hymt.bench.workload import Workload, parse_concurrency_list

    peer = read_peer_results(args.peer_results) if args.peer_results else None  # a bad file fails before the run
    workload = Workload(
        num_requests=args.num_requests if args.num_requests is not None else 2000,
        prompt_len_min=args.prompt_len_min, prompt_len_max=args.prompt_len_max, output_len=args.output_len,
        batch1_requests=args.batch1_requests, seed=args.seed, closed_loop=parse_concurrency_list(args.closed_loop),
    )
    engine = {**engine_overrides(args), "seed": args.seed}
    options = BenchOptions(
        model=args.model, random_weights=args.random_weights, family=args.family, workload=workload,
        device=args.device, dtype=args.dtype, engine=engine, baseline=args.baseline,
        baseline_requests=args.baseline_requests, baseline_batch_size=args.baseline_batch_size,
        warmup_requests=args.warmup_requests,
    )
    if args.compare_quantization:
        return _run_quant_compare(args, options, command)
    result = replace(run_bench(options, command=command), peer=peer)
    if args.json:
        result.write_json(args.json)
    print(format_bench(result))
    return 0


def _run_quant_compare(args: argparse.Namespace, options, command: str) -> int:
    from hymt.bench.quant_compare import parse_schemes, run_quant_compare
    from hymt.bench.report import format_quant_compare

    if args.quantization:
        from hymt.errors import InvalidInputError

        raise InvalidInputError("--quantization and --compare-quantization exclude each other", field="quantization")
    result = run_quant_compare(options, parse_schemes(args.compare_quantization),
                               quality_prompts=args.quality_prompts, command=command)
    if args.json:
        result.write_json(args.json)
    print(format_quant_compare(result))
    return 0


def _run_server(args: argparse.Namespace, command: str) -> int:
    from hymt.bench.report import format_server_load
    from hymt.bench.runner import env_info
    from hymt.bench.server_load import ServerLoadOptions, run_server_load

    options = ServerLoadOptions(
        url=args.server, concurrency=args.concurrency,
        num_requests=args.num_requests if args.num_requests is not None else 256, api_key=args.api_key,
        src=args.src, tgt=args.tgt, output_len=args.output_len, words=args.words, processes=args.client_processes,
        time_limit_s=args.time_limit, timeout_s=args.timeout, wait_workers=args.wait_workers,
    )
    result = run_server_load(options, env=env_info(command, None))
    if args.json:
        result.write_json(args.json)
    print(format_server_load(result))
    return 0 if result.completed else 1
