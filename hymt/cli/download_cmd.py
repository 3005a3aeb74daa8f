"""`hymt download MODEL`: fetch a checkpoint from the Hugging Face hub into its cache."""
from __future__ import annotations

import argparse


def register(subparsers) -> None:
    parser = subparsers.add_parser("download", help="download a checkpoint from the Hugging Face hub")
    parser.add_argument("model", help="hub id, e.g. tencent/HY-MT1.5-1.8B")
    parser.add_argument("--revision", default=None, help="branch, tag or commit")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from hymt.checkpoint import resolve_model_dir

    print(resolve_model_dir(args.model, revision=args.revision))
    return 0
