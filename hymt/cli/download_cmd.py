"""`hymt download MODEL`: fetch a checkpoint from the Hugging Face hub into its local cache.

    hymt download tencent/HY-MT1.5-1.8B
    hymt download tencent/HY-MT1.5-7B --revision main

Prints the local directory of the checkpoint. Later `hymt serve` and `hymt translate` runs
with the same hub id read it from the cache (set HF_HUB_OFFLINE=1 to never go online).
On a machine without internet access, copy a checkpoint directory to it instead and pass
that directory to `--model` of `hymt serve` or `hymt translate`.
"""
from __future__ import annotations

import argparse

from hymt.cli.help_format import DefaultsHelpFormatter
from hymt.errors import ModelLoadError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("download", help="download a checkpoint from the Hugging Face hub",
                                   description=__doc__, formatter_class=DefaultsHelpFormatter)
    parser.add_argument("model", help="hub id, e.g. tencent/HY-MT1.5-1.8B (a local directory is printed as is)")
    parser.add_argument("--revision", default=None, help="branch, tag or commit (default: the main branch)")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from hymt.checkpoint import resolve_model_dir

    try:
        path = resolve_model_dir(args.model, revision=args.revision)
    except ModelLoadError as exc:
        raise ModelLoadError(_download_failure(args.model, exc)) from exc
    print(path)
    return 0


def _download_failure(model: str, exc: ModelLoadError) -> str:
    """The checkpoint loader's message speaks of --model, which download does not take."""
    cause = exc.__cause__
    if cause is None:  # not a hub id at all
        return f"{model!r} is not a Hugging Face hub id (owner/name, e.g. tencent/HY-MT1.5-1.8B)"
    name = model.rstrip("/").split("/")[-1]
    return (
        f"could not download {model!r} ({type(cause).__name__}: {cause}). Without access to the hub, "
        f"copy the checkpoint directory from a machine that has it (e.g. one where `hymt download {model}` "
        f"works; it prints the directory) and pass that directory to `hymt serve --model /path/to/{name}` "
        f"or `hymt translate --model /path/to/{name}`"
    )
