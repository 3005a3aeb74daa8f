"""`hymt eval`: translate a corpus with the full pipeline and score it, for one scheme, for
several schemes side by side (`--compare-quantization`), or for the Chimera fusion pipeline
against the plain model (`--fusion N`).

    plan = EvalPlan(ModelSettings("tencent/HY-MT1.5-1.8B"), schemes=("bf16", "int4"))
    report = run_eval(plan, Corpus.from_files(src, ref, source=None, target=None))
    print(report.format())

Schemes run one after another, each in its own Translator, closed before the next loads.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hymt.errors import InvalidInputError
from hymt.eval.chunk_store import DEFAULT_CHUNK_SIZE, ChunkStore, run_key
from hymt.eval.corpus import Corpus
from hymt.eval.model_factory import (
    REFERENCE_SCHEME,
    ModelSettings,
    TranslatorFactory,
    check_schemes,
    default_factory,
)
from hymt.eval.passes import PassResult, PassSpec, PassStats, run_pass
from hymt.eval.report import EvalReport, EvalRow, Mode
from hymt.eval.scheme_session import SchemeSession
from hymt.eval.scoring import MetricScore, Scorer, bleu_tokenizer
from hymt.families import ModelFamily
from hymt.translate.options import TranslateOptions
from hymt.translate.request import require_template
from hymt.translate.sampling_policy import Sampling

if TYPE_CHECKING:
    from hymt.translate.translator import Translator

#: The translation options of evaluation: the cache stays out of it unless asked for.
EVAL_OPTIONS = TranslateOptions(use_cache=False)
MAX_FUSION_CANDIDATES = 16


def default_work_dir() -> Path:
    """Work files when neither --work-dir nor --output is given: next to the translation cache."""
    from hymt.translate.cache import default_cache_path

    return default_cache_path().parent / "eval"


@dataclass(frozen=True)
class EvalPlan:
    """What to evaluate and how.

    Attributes:
        settings: the model.
        schemes: quantization schemes to run, the reference (unquantized) first when several.
        options: translate options of the plain passes (use_cache follows settings.use_cache).
        fusion: Chimera candidates per sentence; None evaluates the plain model only.
        chunk_size: sentences per translate_batch call and per work-file record.
        work_dir: where the work files go (default_work_dir() when None).
        output: the outputs file; with several systems, one file each, named `<stem>.<label><suffix>`.
        tokenize: BLEU's tokenizer (None: chosen from the target).
        ter: also compute TER.
        limit: only the first `limit` sentences.
        command: the command line, for the report.
    """

    settings: ModelSettings
    schemes: tuple[str, ...] = (REFERENCE_SCHEME,)
    options: TranslateOptions = EVAL_OPTIONS
    fusion: int | None = None
    chunk_size: int = DEFAULT_CHUNK_SIZE
    work_dir: Path | None = None
    output: Path | None = None
    tokenize: str | None = None
    ter: bool = False
    limit: int | None = None
    command: str = ""
    progress: bool = True

    def __post_init__(self) -> None:
        if not self.schemes:
            raise InvalidInputError("at least one scheme is needed", field="compare_quantization")
        if self.chunk_size < 1:
            raise InvalidInputError(f"--chunk-size must be a positive number, got {self.chunk_size}",
                                    field="chunk_size")
        if self.fusion is not None:
            if not 1 <= self.fusion <= MAX_FUSION_CANDIDATES:
                raise InvalidInputError(f"--fusion takes 1 to {MAX_FUSION_CANDIDATES} candidates, got {self.fusion}",
                                        field="fusion")
            if len(self.schemes) > 1:
                raise InvalidInputError("--fusion runs one scheme; drop --compare-quantization", field="fusion")
        object.__setattr__(self, "options", self.options.replace(use_cache=self.settings.use_cache))

    def resolved_work_dir(self) -> Path:
        if self.work_dir is not None:
            return self.work_dir
        if self.output is not None:
            return self.output.with_name(self.output.name + ".work")
        return default_work_dir()

    @property
    def mode(self) -> Mode:
        if self.fusion is not None:
            return "fusion"
        return "compare-quantization" if len(self.schemes) > 1 else "single"


def run_eval(plan: EvalPlan, corpus: Corpus, *, factory: TranslatorFactory | None = None) -> EvalReport:
    """Translate and score `corpus` as `plan` says; `factory` opens the model per scheme
    (default: the plan's model settings)."""
    corpus = corpus.head(plan.limit)
    family = plan.settings.family_of()
    _check(plan, corpus, family)
    scorer = Scorer(corpus.target, bleu_tokenizer(corpus.target, plan.tokenize), plan.ter)
    runner = _Runner(plan, corpus, factory or default_factory(plan.settings))
    rows = runner.fusion(scorer) if plan.fusion is not None else runner.schemes(scorer)
    settings = plan.settings
    model = {**dataclasses.asdict(settings), "device": str(settings.torch_device()), "dtype": settings.dtype_name(),
             "family": family.name}
    return EvalReport(plan.mode, plan.command, corpus.describe(), model, plan.options.to_dict(),
                      scorer.tokenizer, rows)


def _check(plan: EvalPlan, corpus: Corpus, family: ModelFamily) -> None:
    if corpus.references is None and plan.mode != "compare-quantization":
        raise InvalidInputError("--ref is required (or --tsv / --flores): without references only "
                                "--compare-quantization can compare schemes with each other", field="ref")
    check_schemes(plan.settings, plan.schemes,
                  "--compare-quantization" if plan.mode == "compare-quantization" else "--quantization")
    if plan.fusion is not None:
        require_template(family, "fusion", "fusion")
        if corpus.source is None:
            raise InvalidInputError("--fusion needs --from (the fusion prompt names the source language)",
                                    field="source")


class _Runner:
    """Runs the passes of one plan and turns them into rows."""

    def __init__(self, plan: EvalPlan, corpus: Corpus, factory: TranslatorFactory) -> None:
        self.plan = plan
        self.corpus = corpus
        self.factory = factory
        self.device = plan.settings.torch_device()
        self.work_dir = plan.resolved_work_dir()
        self.base_key = {"model": plan.settings.fingerprint(), "data": corpus.digest(),
                         "chunk_size": plan.chunk_size}

    def schemes(self, scorer: Scorer) -> tuple[EvalRow, ...]:
        results = []
        for scheme in self.plan.schemes:
            with SchemeSession(self.factory, scheme, self.device, self._warmup) as session:
                result = self._pass(PassSpec(scheme, scheme, self.plan.options), session)
                memory, load_s = session.close()
            results.append((result, memory, load_s))
        baseline = results[0][0].outputs if len(results) > 1 else None
        rows = []
        for result, memory, load_s in results:
            fidelity = scorer.fidelity(result.outputs, baseline) if baseline is not None else None
            rows.append(EvalRow(result.spec.label, result.spec.scheme, self._write_outputs(result),
                                (result.work_file,), result.stats, self._scores(scorer, result), fidelity,
                                memory, load_s))
        return tuple(rows)

    def fusion(self, scorer: Scorer) -> tuple[EvalRow, ...]:
        """The plain model (greedy, default template), then N sampled candidates per sentence
        and one fusion request per sentence over them."""
        scheme, options, n = self.plan.schemes[0], self.plan.options, self.plan.fusion or 0
        with SchemeSession(self.factory, scheme, self.device, self._warmup) as session:
            plain = self._pass(PassSpec("plain", scheme, options), session)
            candidates = [self._pass(PassSpec(f"candidate {k + 1}", scheme,
                                              options.replace(sampling=Sampling(preset="official", seed=k))), session)
                          for k in range(n)]
            per_sentence = tuple(tuple(dict.fromkeys(c.outputs[i] for c in candidates if c.outputs[i].strip()))
                                 for i in range(len(self.corpus)))
            fused = self._pass(PassSpec("fusion", scheme, options.replace(template="fusion"), per_sentence), session)
            memory, load_s = session.close()
        passes = {p.spec.label: p.stats for p in (*candidates, fused)}
        total = PassStats()
        for stats in passes.values():
            total = total.plus(stats)
        plain_row = EvalRow("plain", scheme, self._write_outputs(plain), (plain.work_file,), plain.stats,
                            self._scores(scorer, plain), None, memory, load_s, {"plain": plain.stats})
        fusion_row = EvalRow(f"fusion x{n}", scheme, self._write_outputs(fused),
                             tuple(p.work_file for p in (*candidates, fused)), total, self._scores(scorer, fused),
                             None, memory, load_s, passes)
        return plain_row, fusion_row

    def _warmup(self, translator: Translator) -> None:
        corpus = self.corpus
        translator.translate_batch([corpus.sources[0]], corpus.target, corpus.source, options=self.plan.options)

    def _pass(self, spec: PassSpec, session: SchemeSession) -> PassResult:
        parts = {**self.base_key, **spec.key_parts()}
        key = run_key(parts)
        store = ChunkStore(self.work_dir, key, {"label": spec.label, **parts})
        return run_pass(spec, self.corpus, store, session.translator, chunk_size=self.plan.chunk_size,
                        progress=self.plan.progress, after_chunk=session.sample_memory)

    def _scores(self, scorer: Scorer, result: PassResult) -> tuple[MetricScore, ...]:
        if self.corpus.references is None:
            return ()
        return scorer.against_references(result.outputs, self.corpus.references)

    def _write_outputs(self, result: PassResult) -> Path:
        """The pass's outputs, one line each: to --output (one file per system when there are
        several), else next to its work file."""
        output = self.plan.output
        if output is None:
            path = result.work_file.with_suffix(".txt")
        elif self.plan.mode == "single":
            path = output
        else:
            label = result.spec.label.split(" ")[0]
            path = output.with_name(f"{output.stem}.{label}{output.suffix}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(text + "\n" for text in result.outputs), encoding="utf-8")
        return path
