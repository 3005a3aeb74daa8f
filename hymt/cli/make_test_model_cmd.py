"""`hymt make-test-model DIR --family NAME [--real-shape]`: write a random checkpoint of a family.

Tiny by default (tests, trying hymt without weights); `--real-shape` writes the family's
real shape with random bf16 weights and a full-vocabulary tokenizer (GPU benchmarks).
"""
from __future__ import annotations

import argparse
import logging
import shlex
import sys
from collections.abc import Iterator

from hymt.cli.verbosity import log_level
from hymt.errors import InvalidInputError


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "make-test-model",
        help="write a random checkpoint of a model family: tiny (tests) or --real-shape (GPU benchmarks)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("directory", help="directory to write (created if missing)")
    parser.add_argument("--family", default="HY-MT1.5-1.8B", help=(
        "official model name whose architecture and tokens to copy, case-insensitive: HY-MT1.5-1.8B, "
        "HY-MT1.5-7B, Hunyuan-MT-7B, Hunyuan-MT-Chimera-7B, Hy-MT2-1.8B, Hy-MT2-7B (default: %(default)s)"))
    parser.add_argument("--seed", type=int, default=0, help="weight seed (default: %(default)s)")
    parser.add_argument("--shards", type=int, default=None,
                        help="number of safetensors shards of a tiny checkpoint (default: 1)")
    parser.add_argument("--real-shape", action="store_true", help=(
        "the family's real config and vocabulary with random bf16 weights (3.6 GB for 1.8B, 15 GB for 7B), "
        "written shard by shard (2 GiB each)"))
    parser.add_argument("--num-layers", type=int, default=None,
                        help="with --real-shape: fewer decoder layers (smoke tests)")
    parser.add_argument("--hidden-size", type=int, default=None,
                        help="with --real-shape: a smaller hidden size (smoke tests); the vocabulary stays real")
    # metavar: argparse would list the choices (import torch) in add_argument otherwise.
    parser.add_argument("--quantization", default=None, choices=_QuantizedFormats(), metavar="FORMAT", help=(
        "write a tiny pre-quantized checkpoint in a published format (GPTQ int4 or compressed-tensors fp8): "
        "%(choices)s"))
    parser.set_defaults(func=_run)


class _QuantizedFormats:
    """The --quantization choices, read from hymt.testing.quantized when argparse first looks
    (it imports torch: building the parser for `hymt --help` must not)."""

    def _names(self) -> list[str]:
        from hymt.testing.quantized import WRITERS

        return sorted(WRITERS)

    def __contains__(self, name: object) -> bool:
        return name in self._names()

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())


def _run(args: argparse.Namespace) -> int:
    from hymt.testing import write_real_shape_checkpoint, write_tiny_checkpoint

    if args.real_shape:
        if args.quantization is not None:
            raise InvalidInputError("--quantization applies to tiny checkpoints", field="quantization")
        if args.shards is not None:
            raise InvalidInputError(
                "--shards applies to tiny checkpoints; --real-shape shards by size", field="shards"
            )
        path = write_real_shape_checkpoint(
            args.directory, args.family, seed=args.seed, num_layers=args.num_layers,
            hidden_size=args.hidden_size, progress=True,
        )
    else:
        for name in ("num_layers", "hidden_size"):
            if getattr(args, name) is not None:
                flag = "--" + name.replace("_", "-")
                raise InvalidInputError(f"{flag} needs --real-shape (tiny checkpoints have fixed sizes)", field=name)
        path = write_tiny_checkpoint(args.directory, args.family, seed=args.seed, num_shards=args.shards or 1,
                                     quantization=args.quantization)
    print(path)  # stdout: the directory alone, for scripts
    if log_level(args) <= logging.WARNING:
        print(next_steps(str(path)), file=sys.stderr)
    return 0


def next_steps(directory: str) -> str:
    """What to run with a freshly written checkpoint."""
    model = shlex.quote(directory)
    return (
        "Written with random weights: translations are gibberish, but every path is real. Try:\n"
        f"  hymt serve --model {model}    (web UI and APIs on http://127.0.0.1:8000)\n"
        f"  hymt translate 'Hello world.' --to de --model {model}"
    )
