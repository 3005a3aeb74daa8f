"""What the document machinery costs: a generated DOCX through `Translator.translate_file` against
the same text through `translate_document`, with the same model, in the same process.

    python tools/bench_documents.py --pages 3                     # CPU: a tiny random checkpoint
    python tools/bench_documents.py --pages 300 --simulate-step-ms 20 --answer-tokens 32   # CPU, GPU-like
    python tools/bench_documents.py --model /models/hy18 --pages 300 --answer-tokens 32   # GPU

The DOCX has `--pages` pages of plain paragraphs (no formatting: every unit is one tag-free
paragraph), so both paths send the engine the same prompts: the difference in wall time is
parsing the package, segmenting units, recording nothing (no OutputLog) and rendering the
DOCX. Each path runs `--repeat` times, alternating; the best run of each is compared.
`--answer-tokens N` forces every answer to N tokens (random-weight checkpoints rarely stop on
their own; with real weights greedy answers are the same on both paths anyway). The cache and
the quality guard's retries are off, so each run does all the engine work.

On CPU the tiny model's engine thread computes with the GIL held much of the time, so it
competes with the document path's own threads and inflates the difference; `--simulate-step-ms`
puts tools/server_overhead.py's SimulatedEngine behind the Translator instead (each step sleeps
without the GIL, as a GPU step does, then gives every running request one token), which
measures the machinery alone.

Prints wall time, segments and segments/s of both paths and the overhead of the DOCX path;
`--json PATH` writes them too. The target is an overhead under 10 %.
"""
from __future__ import annotations

import argparse
import io
import json
import random
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from hymt.translate import Translator
from hymt.translate.options import TranslateOptions
from hymt.translate.sampling_policy import Sampling

WORDS = ("the report team market quarter growth region customer product service price order plan study result "
         "office meeting project budget policy change system review support data value risk cost sale share "
         "first second new strong clear small large early late local global annual public private careful "
         "grows shows needs keeps brings makes takes gives finds helps starts moves leads opens closes builds "
         "quickly slowly often rarely again already still almost nearly mostly").split()
PARAGRAPHS_PER_PAGE = 6
SENTENCES_PER_PARAGRAPH = (2, 5)
WORDS_PER_SENTENCE = (8, 22)


@dataclass(frozen=True)
class Run:
    path: str
    wall_s: float
    segments: int

    @property
    def segments_per_s(self) -> float:
        return self.segments / self.wall_s if self.wall_s else 0.0


def paragraphs(pages: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(pages * PARAGRAPHS_PER_PAGE):
        sentences = []
        for _ in range(rng.randint(*SENTENCES_PER_PARAGRAPH)):
            words = [rng.choice(WORDS) for _ in range(rng.randint(*WORDS_PER_SENTENCE))]
            sentences.append(" ".join(words).capitalize() + ".")
        out.append(" ".join(sentences))
    return out


def docx_bytes(texts: list[str]) -> bytes:
    import docx

    document = docx.Document()
    for text in texts:
        document.add_paragraph(text)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def timed_file(translator: Translator, data: bytes, target: str, options: TranslateOptions) -> Run:
    start = time.perf_counter()
    result = translator.translate_file(data, target, "en", format="docx", filename="bench.docx", options=options)
    return Run("translate_file (docx)", time.perf_counter() - start, result.translated_segments)


def timed_text(translator: Translator, text: str, target: str, options: TranslateOptions) -> Run:
    start = time.perf_counter()
    result = translator.translate_document(text, target, "en", options=options.replace(format="text"))
    return Run("translate_document (text)", time.perf_counter() - start, sum(s.translatable for s in result.segments))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", help="checkpoint directory or hub id (default: a tiny random checkpoint)")
    parser.add_argument("--pages", type=int, default=300, help="pages of the generated DOCX (6 paragraphs each)")
    parser.add_argument("--answer-tokens", type=int, default=None, metavar="N",
                        help="force every answer to N tokens (random weights); default: the model decides")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each path, alternating; the best counts")
    parser.add_argument("--target", default="de", help="target language")
    parser.add_argument("--device", default=None, help="torch device (default: CUDA if available, else CPU)")
    parser.add_argument("--gpu-memory-gb", type=float, default=None, help="the engine's memory budget")
    parser.add_argument("--simulate-step-ms", type=float, default=None, metavar="MS",
                        help="a simulated engine whose steps take MS without the GIL (needs --answer-tokens)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated text")
    parser.add_argument("--json", type=Path, help="also write the results here")
    return parser.parse_args(argv)


def engine_of(args: argparse.Namespace) -> object:
    """The engine argument of Translator: the native engine, or the simulated one."""
    if args.simulate_step_ms is None:
        return "native"
    if not args.answer_tokens:
        raise SystemExit("--simulate-step-ms needs --answer-tokens (the simulated engine never stops on its own)")
    sys.path.insert(0, str(Path(__file__).parent))
    from server_overhead import SimulatedEngine

    return SimulatedEngine(step_s=args.simulate_step_ms / 1000, per_seq_s=0.0, max_batch=1024)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    texts = paragraphs(args.pages, args.seed)
    data, text = docx_bytes(texts), "\n\n".join(texts) + "\n"
    sampling = Sampling(max_tokens=args.answer_tokens, ignore_eos=True) if args.answer_tokens else Sampling()
    options = TranslateOptions(use_cache=False, retry=False, sampling=sampling)
    with tempfile.TemporaryDirectory() as scratch:
        model = args.model
        if model is None:
            from hymt.testing import write_tiny_checkpoint

            model = str(write_tiny_checkpoint(Path(scratch) / "HY-MT1.5-1.8B", "HY-MT1.5-1.8B"))
        from hymt.engine.config import EngineConfig

        config = EngineConfig(gpu_memory_gb=args.gpu_memory_gb)
        with Translator(model, engine=engine_of(args), device=args.device, cache=False,  # type: ignore[arg-type]
                        engine_config=config) as translator:
            translator.translate("Warm up the engine.", args.target, "en", options=options)
            runs: dict[str, list[Run]] = {"text": [], "docx": []}
            for _ in range(args.repeat):
                runs["text"].append(timed_text(translator, text, args.target, options))
                runs["docx"].append(timed_file(translator, data, args.target, options))
    best = {name: min(found, key=lambda r: r.wall_s) for name, found in runs.items()}
    overhead = best["docx"].wall_s / best["text"].wall_s - 1
    engine = f"simulated {args.simulate_step_ms:g} ms steps" if args.simulate_step_ms else args.model or "tiny"
    print(f"{args.pages} pages, {len(texts)} paragraphs, {len(data) / 1024:.0f} KiB DOCX, engine: {engine}")
    for run in best.values():
        print(f"  {run.path:28s} {run.wall_s:9.2f} s  {run.segments:6d} segments  {run.segments_per_s:9.1f} seg/s")
    print(f"  document overhead: {overhead * 100:+.1f} % (target: under 10 %)")
    if best["docx"].segments != best["text"].segments:
        print("  note: the two paths split the text into different segments", file=sys.stderr)
    if args.json:
        report = {"pages": args.pages, "paragraphs": len(texts), "docx_bytes": len(data), "model": args.model,
                  "simulate_step_ms": args.simulate_step_ms,
                  "answer_tokens": args.answer_tokens, "overhead": overhead,
                  "runs": {name: [{**asdict(r), "segments_per_s": r.segments_per_s} for r in found]
                           for name, found in runs.items()}}
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
