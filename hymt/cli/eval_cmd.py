"""`hymt eval`: how good is this model on my data, and what does each quantization cost?

    hymt eval --model M --src test.en --ref test.zh --from en --to zh
    hymt eval --model M --flores flores200_dataset --from eng_Latn --to zho_Hans
    hymt eval --model M --src devtest.eng_Latn --ref devtest.zho_Hans          # languages from the names
    hymt eval --model M --tsv pairs.tsv --columns en,zh --to zh
    hymt eval --model M --src test.en --to zh --compare-quantization bf16,fp8,int8,int4 --json out.json
    hymt eval --model tencent/Hunyuan-MT-Chimera-7B --src s --ref r --from en --to zh --fusion 4

Everything is translated through the full pipeline (templates, segmentation, quality guard)
and scored with sacrebleu; see docs/EVAL.md.
"""
from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from hymt.cli.translate_cmd import DEFAULT_MODEL
from hymt.engine.config import QUANTIZATION_CHOICES
from hymt.eval.chunk_store import DEFAULT_CHUNK_SIZE

if TYPE_CHECKING:
    from hymt.eval.corpus import Corpus
    from hymt.eval.runner import EvalPlan


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "eval",
        help="score translation quality on a test set (BLEU, chrF++), per quantization scheme",
        description="Translate a test set with the full pipeline and score it with sacrebleu.",
    )
    data = parser.add_argument_group("data (one sentence per line)")
    data.add_argument("--src", type=Path, help="source sentences")
    data.add_argument("--ref", type=Path, help="reference translations, line-aligned with --src")
    data.add_argument("--tsv", type=Path, help="a TSV file with source and reference columns")
    data.add_argument("--columns", metavar="SRC,REF",
                      help="the TSV's source and reference columns: header names or 1-based numbers "
                           "(default: the first two)")
    data.add_argument("--tsv-header", action="store_true", help="the TSV's first row is a header (skip it)")
    data.add_argument("--flores", type=Path, metavar="DIR",
                      help="a FLORES-200 / FLORES+ directory; --from and --to pick the files")
    data.add_argument("--split", default="devtest", choices=("dev", "devtest"), help="FLORES split (default devtest)")
    data.add_argument("--from", dest="source",
                      help="source language: code, name or FLORES code (default: from the file name, else detect)")
    data.add_argument("--to", dest="target", help="target language (default: from the reference file name)")
    data.add_argument("--limit", type=int, help="only the first N sentences")
    model = parser.add_argument_group("model")
    model.add_argument("--model", default=DEFAULT_MODEL,
                       help=f"hub id or local checkpoint dir (default {DEFAULT_MODEL})")
    model.add_argument("--family", help="model family name (default: detected from the checkpoint)")
    model.add_argument("--engine", default="native", choices=("native", "transformers", "openai"),
                       help="token engine backend (default native)")
    model.add_argument("--base-url", help="server root for --engine openai")
    model.add_argument("--device", help="torch device (default: CUDA if available, else CPU)")
    model.add_argument("--dtype", help="weight dtype (default: bfloat16 on CUDA, float32 on CPU)")
    model.add_argument("--gpu-memory-gb", type=float,
                       help="the native engine's memory budget (default 90%% of the GPU)")
    model.add_argument("--quantization", choices=QUANTIZATION_CHOICES[1:], help="evaluate one quantized scheme")
    model.add_argument("--compare-quantization", metavar="LIST",
                       help="comma list of schemes to run one after another on the same data, e.g. "
                            "bf16,fp8,int8,int4 (bf16, the unquantized model, is added first if missing)")
    model.add_argument("--fusion", type=int, metavar="N",
                       help="Chimera: N sampled candidates per sentence, then one fusion request; compared "
                            "with the plain model")
    how = parser.add_argument_group("translation and scoring")
    how.add_argument("--sampling", choices=("greedy", "official"), default="greedy",
                     help="decoding of the plain passes (default greedy)")
    how.add_argument("--no-retry", action="store_true", help="no quality-guard retries (issues still counted)")
    how.add_argument("--answer-tokens", type=int, metavar="N",
                     help="force every answer to N tokens (end of sequence ignored, no retries): speed runs "
                          "on random weights, whose answers never end; the scores then mean nothing")
    how.add_argument("--use-cache", action="store_true", help="read and write the translation cache (off by default)")
    how.add_argument("--tokenize", help="BLEU tokenizer (default: zh for Chinese, ja-mecab/char for Japanese, "
                                        "else 13a)")
    how.add_argument("--ter", action="store_true", help="also compute TER")
    how.add_argument("--chunk-size", type=int, default=DEFAULT_CHUNK_SIZE,
                     help=f"sentences per batch and per resumable chunk (default {DEFAULT_CHUNK_SIZE})")
    out = parser.add_argument_group("output")
    out.add_argument("-o", "--output", type=Path,
                     help="write the translations here, one line each (several systems: FILE.<label>.ext)")
    out.add_argument("--work-dir", type=Path,
                     help="resumable work files (default: OUTPUT.work, else the hymt cache dir's eval/)")
    out.add_argument("--json", type=Path, metavar="PATH", help="write scores, signatures, rows and options as JSON")
    out.add_argument("--no-progress", action="store_true", help="no progress bars")
    parser.set_defaults(func=run)


def load_corpus(args: argparse.Namespace) -> Corpus:
    """The corpus the data options name (errors name the option)."""
    from hymt.errors import InvalidInputError
    from hymt.eval.corpus import Corpus
    from hymt.eval.flores import eval_language

    source = eval_language(args.source, "--from") if args.source and args.source != "auto" else None
    target = eval_language(args.target, "--to") if args.target else None
    given = [name for name, value in (("--src", args.src), ("--tsv", args.tsv), ("--flores", args.flores)) if value]
    if len(given) != 1:
        raise InvalidInputError(f"give exactly one of --src, --tsv or --flores (got {', '.join(given) or 'none'})",
                                field="src")
    if args.ref is not None and args.src is None:
        raise InvalidInputError("--ref goes with --src", field="ref")
    if (args.columns or args.tsv_header) and args.tsv is None:
        raise InvalidInputError("--columns and --tsv-header go with --tsv", field="columns")
    if args.src is not None:
        return Corpus.from_files(args.src, args.ref, source=source, target=target)
    if args.tsv is not None:
        return Corpus.from_tsv(args.tsv, _columns(args.columns), header=args.tsv_header, source=source, target=target)
    if source is None or target is None:
        raise InvalidInputError("--flores needs --from and --to (e.g. --from eng_Latn --to zho_Hans)",
                                field="from" if source is None else "to")
    return Corpus.from_flores(args.flores, source, target, args.split)


def _columns(value: str | None) -> tuple[str, str] | None:
    from hymt.errors import InvalidInputError

    if value is None:
        return None
    names = [c.strip() for c in value.split(",")]
    if len(names) != 2 or not all(names):
        raise InvalidInputError(f"--columns takes SRC,REF (two names or numbers), got {value!r}", field="columns")
    return names[0], names[1]


def build_plan(args: argparse.Namespace) -> EvalPlan:
    from hymt.bench.quant_compare import parse_schemes
    from hymt.errors import InvalidInputError
    from hymt.eval.model_factory import REFERENCE_SCHEME, ModelSettings
    from hymt.eval.runner import EVAL_OPTIONS, EvalPlan
    from hymt.translate.sampling_policy import Sampling

    if args.compare_quantization and args.quantization:
        raise InvalidInputError("--quantization and --compare-quantization exclude each other", field="quantization")
    if args.compare_quantization:
        schemes = parse_schemes(args.compare_quantization)
    else:
        schemes = (args.quantization or REFERENCE_SCHEME,)
    settings = ModelSettings(args.model, engine=args.engine, family=args.family, device=args.device,
                             dtype=args.dtype, base_url=args.base_url, gpu_memory_gb=args.gpu_memory_gb,
                             use_cache=args.use_cache)
    options = EVAL_OPTIONS.replace(sampling=args.sampling, retry=not args.no_retry)
    if args.answer_tokens is not None:
        if args.answer_tokens < 1:
            raise InvalidInputError(f"--answer-tokens must be at least 1, got {args.answer_tokens}",
                                    field="answer_tokens")
        options = options.replace(sampling=Sampling(preset=args.sampling, max_tokens=args.answer_tokens,
                                                    ignore_eos=True), retry=False)
    return EvalPlan(settings, schemes, options, fusion=args.fusion, chunk_size=args.chunk_size,
                    work_dir=args.work_dir, output=args.output, tokenize=args.tokenize, ter=args.ter,
                    limit=args.limit, command=shlex.join(["hymt", *sys.argv[1:]]), progress=not args.no_progress)


def run(args: argparse.Namespace) -> int:
    from hymt.eval.runner import run_eval

    corpus = load_corpus(args)
    plan = build_plan(args)
    report = run_eval(plan, corpus)
    print(report.format())
    if args.json is not None:
        report.write_json(args.json)
        print(f"json: {args.json}")
    return 0
