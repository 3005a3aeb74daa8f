"""EvalReport: the table, signatures and notes; the JSON it writes."""
from __future__ import annotations

import json
from pathlib import Path

from hymt.eval.memory_probe import MemoryUse
from hymt.eval.passes import PassStats
from hymt.eval.report import EvalReport, EvalRow
from hymt.eval.scoring import BleuTokenizer, MetricScore

BLEU = MetricScore("BLEU", 31.5, "nrefs:1|case:mixed|eff:no|tok:zh|smooth:exp|version:2.6.0", "BLEU = 31.50")
CHRF = MetricScore("chrF++", 28.25, "nrefs:1|case:mixed|eff:yes|nc:6|nw:2|space:no|version:2.6.0", "chrF2++ = 28.25")
DATA = {"origin": "a + b", "sentences": 4, "source": "en", "target": "zh"}
MODEL = {"model": "m", "family": "HY-MT1.5-1.8B", "device": "cuda:0", "dtype": "bfloat16", "engine": "native"}


CUDA_MEMORY = MemoryUse("cuda_max_allocated", 3 * 1024**3, 1024**3)
STATS = PassStats(4, 4, 100, 200, 2.0, 1, 0, {"echo": 1})


def row(label, scores, fidelity=None, passes=None, stats=STATS):
    return EvalRow(label, "bf16", Path(f"{label}.txt"), (Path("w.jsonl"),), stats, scores, fidelity, CUDA_MEMORY,
                   1.5, passes or {})


def report(mode, rows):
    return EvalReport(mode, "hymt eval ...", DATA, MODEL, {"retry": True}, BleuTokenizer("zh", "Chinese target"), rows)


def test_comparison_table_and_signatures(tmp_path):
    fid = MetricScore("chrF++", 100.0, CHRF.signature, "")
    text = report("compare-quantization", (row("bf16", (BLEU, CHRF), fid),
                                           row("int4", (BLEU, CHRF), fid))).format()
    lines = text.splitlines()
    assert lines[3].split() == ["system", "BLEU", "chrF++", "fidelity", "tok/s", "requests", "wall", "s", "load", "s",
                                "peak", "GiB", "weights", "GiB", "issues"]
    assert lines[4].split() == ["bf16", "31.50", "28.25", "100.00", "100.0", "4", "2.0", "1.5", "3.00", "1.00", "1"]
    assert f"BLEU     {BLEU.signature}" in text and "BLEU tokenize: zh (Chinese target)" in text
    assert "torch.cuda.max_memory_allocated" in text and "outputs int4: int4.txt" in text


def test_fusion_notes_give_the_cost():
    passes = {"candidate 1": PassStats(4, 4, 0, 0, 2.0), "fusion": PassStats(4, 4, 0, 0, 4.0)}
    total = passes["candidate 1"].plus(passes["fusion"])
    text = report("fusion", (row("plain", (BLEU, CHRF)), row("fusion x1", (BLEU, CHRF), passes=passes,
                                                               stats=total))).format()
    assert "fusion cost: 8 requests, 6.0 s (3.0x the plain model's time): candidate 1 4 req 2.0 s, fusion 4 req" in text


def test_json_has_rows_signatures_and_memory(tmp_path):
    path = tmp_path / "r.json"
    report("single", (row("bf16", (BLEU, CHRF)),)).write_json(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["signatures"] == {"BLEU": BLEU.signature, "chrF++": CHRF.signature}
    (only,) = data["rows"]
    assert only["scores"]["BLEU"]["score"] == 31.5 and only["memory"]["peak_bytes"] == 3 * 1024**3
    assert only["tokens_per_s"] == 100.0 and only["outputs"] == "bf16.txt" and only["issues"] == {"echo": 1}
