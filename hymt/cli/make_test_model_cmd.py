"""`hymt make-test-model DIR --family NAME`: write a tiny random checkpoint of a family."""
from __future__ import annotations

import argparse


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "make-test-model",
        help="write a tiny random checkpoint of a model family (for tests and trying hymt without weights)",
    )
    parser.add_argument("directory", help="directory to write (created if missing)")
    parser.add_argument("--family", default="HY-MT1.5-1.8B", help=(
        "official model name whose architecture and tokens to copy, case-insensitive: HY-MT1.5-1.8B, "
        "HY-MT1.5-7B, Hunyuan-MT-7B, Hunyuan-MT-Chimera-7B, Hy-MT2-1.8B, Hy-MT2-7B (default: %(default)s)"))
    parser.add_argument("--seed", type=int, default=0, help="weight seed (default: %(default)s)")
    parser.add_argument("--shards", type=int, default=1, help="number of safetensors shards (default: 1)")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from hymt.testing import write_tiny_checkpoint

    path = write_tiny_checkpoint(args.directory, args.family, seed=args.seed, num_shards=args.shards)
    print(path)
    return 0
