"""`hymt translate-corpus`: a corpus file (JSONL, CSV, TSV, Parquet, text) translated row by row.

    hymt translate-corpus sentences.txt --to de -o sentences.de.txt
    hymt translate-corpus data.jsonl --column sentence --id-column uid --to zh -o data.zh.jsonl
    hymt translate-corpus big.parquet --to en -o big.en.parquet --ray          # Ray Data, one engine per GPU

The output keeps the input's order: per row its id (--id-column), the source text, the source
language (when detected or read per row) and the translation; a plain-text output has one
translation per line. Formats come from the suffixes (else --format / --output-format).

Resumable: rows are recorded in OUTPUT.hymt-work.jsonl as they are translated; after an
interruption the same command goes on from there. Without --ray (or $RAY_ADDRESS) the rows go
through one engine in this process; with it, through Ray Data on the cluster.
"""
from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from hymt.cli.engine_args import add_engine_arguments, engine_config_from_args
from hymt.cli.help_format import DefaultsHelpFormatter
from hymt.cli.translate_cmd import parse_glossary
from hymt.cli.verbosity import log_level
from hymt.engine.factory import BACKENDS
from hymt.errors import InvalidInputError
from hymt.families import DEFAULT_MODEL

if TYPE_CHECKING:
    from hymt.scale.corpus_batch import CorpusRequest, TranslatorSpec
    from hymt.scale.corpus_run import CorpusJob, CorpusRunner, CorpusSummary

_FORMATS = ("jsonl", "csv", "tsv", "parquet", "text")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("translate-corpus", help="translate a corpus file (JSONL, CSV, TSV, Parquet, text)",
                              description=__doc__, formatter_class=DefaultsHelpFormatter)
    p.add_argument("input", metavar="INPUT", help="the corpus file")
    p.add_argument("--to", dest="target", required=True, help="target language (code or name)")
    p.add_argument("-o", "--output", required=True, metavar="OUTPUT", help="the translated corpus")
    p.add_argument("--from", dest="source", default="auto",
                   help="source language of every row; auto detects each row's")
    p.add_argument("--source-column", metavar="NAME", help="column holding each row's source language")
    p.add_argument("--column", metavar="NAME",
                   help="column to translate (default: text; the first column of a CSV/TSV without a header)")
    p.add_argument("--id-column", metavar="NAME", help="column of row ids, kept in the output")
    p.add_argument("--format", choices=_FORMATS, help="input format (default: from the suffix, else text)")
    p.add_argument("--output-format", choices=_FORMATS, help="output format (default: from the suffix)")
    p.add_argument("--no-header", action="store_true", help="CSV/TSV without a header row: columns are 1, 2, ...")
    p.add_argument("--batch-size", type=int, default=256, metavar="N", help="rows per engine batch")
    p.add_argument("--overwrite", action="store_true", help="replace OUTPUT and any unfinished run of it")
    p.add_argument("--model", default=DEFAULT_MODEL, help="hub id or local checkpoint directory")
    p.add_argument("--family", help="model family name (default: detected from the checkpoint)")
    p.add_argument("--engine", default="native", choices=BACKENDS, help="token engine")
    p.add_argument("--base-url", help="server root for --engine openai")
    p.add_argument("--device", help="torch device (default: CUDA if available, else CPU)")
    p.add_argument("--dtype", help="weight dtype (default: bfloat16 on CUDA, float32 on CPU)")
    p.add_argument("--max-tokens", type=int, metavar="N",
                   help="most tokens of any one answer (default: 3 x source tokens + 64 per segment)")
    p.add_argument("--glossary", action="append", default=[], metavar="SRC=TGT", help="glossary entry (repeatable)")
    p.add_argument("--sampling", choices=("greedy", "official"), default="greedy", help="decoding")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the translation cache")
    p.add_argument("--no-retry", action="store_true", help="no second request for segments the guard flags")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_engine_arguments(p.add_argument_group("native engine (--engine native; with --ray, each engine's)"))
    ray = p.add_argument_group("Ray Data", 'needs: pip install "hymt[ray]"')
    ray.add_argument("--ray", dest="ray", action="store_true", default=None,
                     help="run on Ray Data, one engine actor per GPU (default: on when $RAY_ADDRESS is set)")
    ray.add_argument("--no-ray", dest="ray", action="store_false", help="one engine in this process, even "
                     "when $RAY_ADDRESS is set")
    ray.add_argument("--ray-address", metavar="ADDR", help="Ray cluster (default: $RAY_ADDRESS, else a local one)")
    ray.add_argument("--ray-actors", type=int, metavar="N", help="engine actors (default: one per GPU)")
    ray.add_argument("--gpus-per-actor", type=float, metavar="G", help="GPUs per actor (default: 1 with GPUs)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hymt.languages import get_language
    from hymt.scale.corpus_batch import CorpusRequest, TranslatorSpec
    from hymt.scale.corpus_io import CorpusColumns, corpus_format, suffix_format
    from hymt.scale.corpus_local import LocalRunner
    from hymt.scale.corpus_run import CorpusJob
    from hymt.scale.corpus_work import work_path
    from hymt.scale.ray_import import cluster_address
    from hymt.translate.options import TranslateOptions

    # Every argument is checked before a model loads.
    get_language(args.target, field="to")
    if args.source != "auto":
        get_language(args.source, field="source")
    source, output = Path(args.input).expanduser(), Path(args.output).expanduser()
    if not source.is_file():
        raise InvalidInputError(f"no such file: {args.input}", field="input")
    if not output.parent.is_dir():
        raise InvalidInputError(f"cannot write {args.output}: the directory {output.parent} does not exist",
                                field="output")
    options = TranslateOptions(glossary=tuple(parse_glossary(args.glossary)),
                               sampling=args.sampling, use_cache=not args.no_cache, retry=not args.no_retry)
    request = CorpusRequest(args.target, args.source, options)
    fmt = corpus_format(source, args.format)
    config = engine_config_from_args(args, args.engine)
    spec = TranslatorSpec(args.model, engine=args.engine, device=args.device, dtype=args.dtype,
                          family=args.family, cache=not args.no_cache, engine_config=config, max_tokens=args.max_tokens,
                          engine_options=(("base_url", args.base_url),) if args.base_url else ())
    job = CorpusJob(source, output, fmt, args.output_format or suffix_format(output) or fmt,
                    request, repr(spec), CorpusColumns(args.column, args.id_column, args.source_column),
                    header=not args.no_header, batch_size=args.batch_size)
    use_ray = args.ray if args.ray is not None else cluster_address(args.ray_address) is not None
    runner = _ray_runner(args, spec, request) if use_ray else LocalRunner(spec, request)
    show = not args.no_progress and log_level(args) <= logging.WARNING
    try:
        summary = _translate(job, runner, show, args.overwrite)
    except KeyboardInterrupt:
        print(f"hymt: interrupted; the same command resumes ({work_path(output).name} keeps what is done)",
              file=sys.stderr)
        raise
    if log_level(args) <= logging.WARNING:
        print(f"{summary.rows} rows -> {summary.output} in {summary.elapsed_s:.1f} s"
              + (f" ({summary.resumed} from an earlier run)" if summary.resumed else ""), file=sys.stderr)
    return 0


def _ray_runner(args: argparse.Namespace, spec: TranslatorSpec, request: CorpusRequest) -> CorpusRunner:
    from hymt.scale.corpus_ray import RayCorpusConfig, RayRunner
    from hymt.scale.ray_import import import_ray

    import_ray("ray.data", field="ray")  # a clear error before anything is read
    config = RayCorpusConfig(address=args.ray_address, actors=args.ray_actors, gpus_per_actor=args.gpus_per_actor)
    return RayRunner(spec, request, config)


def _translate(job: CorpusJob, runner: CorpusRunner, show: bool, overwrite: bool) -> CorpusSummary:
    from hymt.scale.corpus_run import translate_corpus

    if not show:
        return translate_corpus(job, runner, overwrite=overwrite)
    from tqdm import tqdm

    # leave=True: the final count and rate stay on screen once the corpus is done.
    with tqdm(total=0, unit="row", desc=job.input.name, file=sys.stderr, leave=True, dynamic_ncols=True) as bar:
        return translate_corpus(job, runner, progress=bar, overwrite=overwrite)
