"""What `hymt eval` found: one row per scheme (or plain model and Chimera fusion), the
scores with sacrebleu's signatures, costs, and the JSON written by `--json`."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from hymt.eval.memory_probe import MEMORY_KIND_TEXT, MemoryUse
from hymt.eval.passes import PassStats
from hymt.eval.scoring import BleuTokenizer, MetricScore

GIB = 1024**3
Mode = Literal["single", "compare-quantization", "fusion"]


@dataclass(frozen=True)
class EvalRow:
    """One system evaluated.

    Attributes:
        label: "bf16", "int4", ..., or "plain" / "fusion" (Chimera).
        scheme: the quantization scheme the model ran with.
        outputs_path: the file of its outputs, one line per sentence.
        work_files: the work files its passes appended to (resume state).
        stats: its cost (for fusion: every candidate pass and the fusion pass together).
        scores: against the references (empty without references).
        fidelity: chrF++ of its outputs against the reference scheme's outputs (None when only
            one scheme ran).
        memory: what its model used.
        load_s: seconds to load its model (None when it never loaded: all chunks resumed).
        passes: the cost of each pass it is made of, by label (fusion rows).
    """

    label: str
    scheme: str
    outputs_path: Path
    work_files: tuple[Path, ...]
    stats: PassStats
    scores: tuple[MetricScore, ...]
    fidelity: MetricScore | None
    memory: MemoryUse
    load_s: float | None
    passes: dict[str, PassStats] = field(default_factory=dict)

    def score(self, metric: str) -> float | None:
        return next((s.score for s in self.scores if s.metric == metric), None)

    def to_dict(self) -> dict[str, object]:
        return {
            "label": self.label, "scheme": self.scheme, "outputs": str(self.outputs_path),
            "work_files": [str(p) for p in self.work_files], **self.stats.to_dict(),
            "scores": {s.metric: s.to_dict() for s in self.scores},
            "fidelity_chrf": self.fidelity.to_dict() if self.fidelity else None,
            "memory": self.memory.to_dict(), "load_s": round(self.load_s, 3) if self.load_s is not None else None,
            "passes": {label: stats.to_dict() for label, stats in self.passes.items()},
        }


@dataclass(frozen=True)
class EvalReport:
    """A whole `hymt eval` run.

    Attributes:
        mode: "single", "compare-quantization" or "fusion".
        command: the command line.
        data: the corpus: origin, sentences, languages, references or not.
        model: the model settings and what they resolved to (device, dtype, family).
        options: the translate options of the plain passes.
        tokenizer: BLEU's tokenizer and why.
        rows: one per system; the first is the reference of `fidelity`.
    """

    mode: Mode
    command: str
    data: dict[str, object]
    model: dict[str, object]
    options: dict[str, object]
    tokenizer: BleuTokenizer
    rows: tuple[EvalRow, ...]

    def to_dict(self) -> dict[str, object]:
        signatures = {s.metric: s.signature for row in self.rows for s in row.scores}
        if any(row.fidelity for row in self.rows):
            signatures["fidelity chrF++"] = next(r.fidelity for r in self.rows if r.fidelity).signature
        return {"mode": self.mode, "command": self.command, "data": self.data, "model": self.model,
                "options": self.options, "bleu_tokenize": {"name": self.tokenizer.name,
                                                           "reason": self.tokenizer.reason},
                "signatures": signatures, "rows": [row.to_dict() for row in self.rows]}

    def write_json(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")

    def format(self) -> str:
        """The text report: data line, table, signatures, notes."""
        data = self.data
        lines = [f"data: {data['origin']}: {data['sentences']} sentences, {data['source']} -> {data['target']}",
                 f"model: {self.model['model']} ({self.model['family']}) on {self.model['device']}, "
                 f"dtype {self.model['dtype']}, engine {self.model['engine']}", ""]
        lines += _table(self.rows, self.mode)
        lines.append("")
        lines += _signatures(self)
        lines += _notes(self)
        return "\n".join(lines)


def _cell(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _memory_cell(memory: MemoryUse) -> str:
    return "n/a" if memory.peak_bytes is None else f"{memory.peak_bytes / GIB:.2f}"


def _table(rows: tuple[EvalRow, ...], mode: Mode) -> list[str]:
    metrics = [s.metric for s in rows[0].scores]  # none without references
    head = ["system", *metrics]
    if mode != "fusion" and len(rows) > 1:
        head.append("fidelity")
    head += ["tok/s", "requests", "wall s", "load s", "peak GiB", "weights GiB", "issues"]
    body = []
    for r in rows:
        cells = [r.label, *(_cell(r.score(m)) for m in metrics)]
        if "fidelity" in head:
            cells.append(_cell(r.fidelity.score if r.fidelity else None))
        weights = None if r.memory.weights_bytes is None else r.memory.weights_bytes / GIB
        cells += [_cell(r.stats.tokens_per_s, 1), str(r.stats.requests), _cell(r.stats.wall_s, 1),
                  _cell(r.load_s, 1), _memory_cell(r.memory), _cell(weights),
                  str(sum(r.stats.issues.values()))]
        body.append(cells)
    widths = [max(len(line[i]) for line in [head, *body]) for i in range(len(head))]
    return ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths)))
            for line in [head, *body]]


def _signatures(report: EvalReport) -> list[str]:
    lines = []
    first = report.rows[0]
    for score in first.scores:
        lines.append(f"{score.metric:<8} {score.signature}")
    fidelity = next((r.fidelity for r in report.rows if r.fidelity), None)
    if fidelity is not None:
        lines.append(f"fidelity chrF++ of each system's output against {first.label}'s output "
                     f"(no reference): {fidelity.signature}")
    lines.append(f"BLEU tokenize: {report.tokenizer.name} ({report.tokenizer.reason})")
    return lines


def _notes(report: EvalReport) -> list[str]:
    rows = report.rows
    kind = next((r.memory.kind for r in rows if r.memory.peak_bytes is not None), "n/a")
    why = " (no model loaded: every chunk came from the work files)" if kind == "n/a" and all(
        r.load_s is None for r in rows) else ""
    lines = [f"peak GiB: {MEMORY_KIND_TEXT[kind]}{why}; weights GiB: the engine's weights as loaded",
             "tok/s: completion tokens over translate wall time; load s: loading and a one-sentence warm-up"]
    dtype = report.model.get("dtype")
    if any(r.scheme == "bf16" for r in rows) and dtype not in (None, "bfloat16"):
        lines.append(f"bf16 is the unquantized model, here in {dtype}")
    if report.mode == "fusion" and len(rows) == 2:
        plain, fusion = rows
        parts = ", ".join(f"{label} {s.requests} req {s.wall_s:.1f} s" for label, s in fusion.passes.items())
        ratio = fusion.stats.wall_s / plain.stats.wall_s if plain.stats.wall_s > 0 else None
        lines.append(f"fusion cost: {fusion.stats.requests} requests, {fusion.stats.wall_s:.1f} s "
                     f"({_cell(ratio, 1)}x the plain model's time): {parts}")
    resumed = sum(r.stats.resumed_chunks for r in rows)
    if resumed:
        lines.append(f"resumed: {resumed} chunk(s) read from the work files (their time counts as first run)")
    lines += [f"outputs {r.label}: {r.outputs_path}" for r in rows]
    return lines
