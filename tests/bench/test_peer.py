"""llama.cpp peer rows: parsing llama-batched-bench, the JSON file, and `hymt bench --peer-results`."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from hymt.bench.peer import (
    HymtRow,
    PeerResults,
    PeerRow,
    format_peer_table,
    hymt_rows,
    parse_batched_bench_jsonl,
    read_peer_results,
)
from hymt.bench.results import LatencyResult, ThroughputResult
from hymt.bench.workload import Workload, parse_concurrency_list
from hymt.cli import main
from hymt.errors import InvalidInputError
from hymt.testing import ENGINE_TEST_CONFIG

#: Genuine output of `llama-batched-bench ... -npp 60 -ntg 32 -npl 1,4,8 --output-format jsonl`
#: (CPU build of the pinned release, tiny random-weights model): its log lines, then one JSON
#: object per batch size.
BATCHED_BENCH_OUTPUT = (Path(__file__).parent / "data" / "llama_batched_bench_cpu.txt").read_text()


def _row(**changes) -> PeerRow:
    row = PeerRow(tool="llama-server", quant="F16", concurrency=32, num_requests=100, wall_s=10.0,
                  requests_per_s=10.0, output_tokens_per_s=320.0, latency_ms_p50=3000.0, latency_ms_p90=3500.0,
                  ttft_ms_p50=None, command="llama-server -m model-f16.gguf")
    return replace(row, **changes)


def _results(*rows: PeerRow) -> PeerResults:
    return PeerResults("llama-cpp-python 0.3.36 (llama.cpp 0c1e57098b)", "NVIDIA H100", "prompts 40-80",
                       rows or (_row(),))


def test_batched_bench_rows_come_from_its_jsonl_lines():
    rows = parse_batched_bench_jsonl(BATCHED_BENCH_OUTPUT, "Q8_0", "llama-batched-bench -m m.gguf")
    entries = [json.loads(line) for line in BATCHED_BENCH_OUTPUT.splitlines() if line.startswith("{")]
    assert [r.concurrency for r in rows] == [e["pl"] for e in entries] == [1, 4, 8]
    for row, entry in zip(rows, entries, strict=True):
        assert row.tool == "llama-batched-bench" and row.quant == "Q8_0" and row.num_requests == entry["pl"]
        assert row.requests_per_s == pytest.approx(entry["pl"] / entry["t"])
        assert row.output_tokens_per_s == pytest.approx(entry["pl"] * entry["tg"] / entry["t"])
        # every sequence of a batch finishes at its end; the first token comes after the prefill
        assert row.latency_ms_p50 == row.latency_ms_p90 == pytest.approx(entry["t"] * 1e3)
        assert row.ttft_ms_p50 == pytest.approx(entry["t_pp"] * 1e3)


def test_batched_bench_output_without_rows_is_an_error():
    log_only = "\n".join(line for line in BATCHED_BENCH_OUTPUT.splitlines() if not line.startswith("{"))
    with pytest.raises(InvalidInputError, match="no JSONL rows"):
        parse_batched_bench_jsonl(log_only, "F16", "cmd")


def test_peer_results_survive_the_json_round_trip(tmp_path):
    results = _results(_row(), _row(tool="llama-batched-bench", quant="Q4_K_M", concurrency=1, ttft_ms_p50=12.5))
    path = tmp_path / "peer.json"
    results.write_json(path)
    assert read_peer_results(path) == results


@pytest.mark.parametrize(("edit", "field"), [
    (lambda d: d["rows"][0].pop("requests_per_s"), "requests_per_s"),
    (lambda d: d["rows"][0].update(quant="Q5_K"), "quant"),
    (lambda d: d["rows"][0].update(tool="vllm"), "tool"),
    (lambda d: d["rows"][0].update(concurrency=0), "concurrency"),
    (lambda d: d["rows"][0].update(latency_ms_p50="fast"), "latency_ms_p50"),
    (lambda d: d.update(rows=[]), "rows"),
    (lambda d: d.update(version=99), "version"),
    (lambda d: d.pop("device"), "device"),
])
def test_a_bad_peer_file_names_the_field(tmp_path, edit, field):
    data = _results().to_dict()
    edit(data)
    path = tmp_path / "peer.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InvalidInputError) as err:
        read_peer_results(path)
    assert err.value.field == field


def test_a_missing_or_broken_peer_file_is_reported(tmp_path):
    with pytest.raises(InvalidInputError, match="cannot read"):
        read_peer_results(tmp_path / "absent.json")
    (tmp_path / "broken.json").write_text("{not json")
    with pytest.raises(InvalidInputError, match="not JSON"):
        read_peer_results(tmp_path / "broken.json")


def test_hymt_rows_take_batch_1_from_the_latency_run_and_the_rest_from_closed_loops():
    latency = LatencyResult("native", 20, 32.0, 5.0, 6.0, 100.0, 120.0, 125.0)
    closed = (ThroughputResult.measure("native, 32 in flight", 640, 8.0, 0, 640 * 32),
              ThroughputResult.measure("native, 256 in flight", 1000, 4.0, 0, 1000 * 32))
    rows = hymt_rows(latency, closed, (32, 256))
    assert [r.concurrency for r in rows] == [1, 32, 256]
    assert rows[0].requests_per_s == pytest.approx(8.0) and rows[0].output_tokens_per_s == pytest.approx(256.0)
    assert rows[0].latency_ms_p50 == 100.0
    assert rows[1].requests_per_s == pytest.approx(80.0) and rows[2].requests_per_s == pytest.approx(250.0)


def test_peer_table_sets_each_peer_row_under_hymt_and_rates_the_matching_quant():
    peer = _results(_row(quant="F16", requests_per_s=40.0), _row(quant="Q8_0", requests_per_s=50.0),
                    _row(tool="llama-batched-bench", quant="Q8_0", concurrency=256, requests_per_s=100.0))
    ours = (HymtRow(1, 8.0, 256.0, 100.0, "batch-1 latency run"), HymtRow(32, 80.0, 2560.0, None, "native, 32"))
    lines = format_peer_table(peer, ours, "int8", "bfloat16")
    body = lines[3:]
    assert [line.split()[0] for line in body] == ["1", "32", "32", "32", "256"]
    q8_at_32 = next(line for line in body if "llama-server Q8_0" in line)
    assert q8_at_32.endswith("1.60x")  # 80 / 50: int8 is compared with Q8_0
    assert not next(line for line in body if "llama-server F16" in line).endswith("x")
    assert not body[-1].endswith("x")  # no hymt row at 256 to compare with
    assert "llama-cpp-python 0.3.36" in lines[0]


def test_closed_loop_takes_a_comma_list():
    assert parse_concurrency_list("32,256") == (32, 256)
    assert parse_concurrency_list("8") == (8,)
    assert parse_concurrency_list("0") == parse_concurrency_list("") == ()
    with pytest.raises(InvalidInputError) as err:
        parse_concurrency_list("32,many")
    assert err.value.field == "closed_loop"
    for bad in ((32, 0), (32, 32), (True,)):
        with pytest.raises(InvalidInputError):
            Workload(closed_loop=bad)


def test_each_closed_loop_run_gets_its_own_prompts():
    w = Workload(num_requests=50, prompt_len_min=8, prompt_len_max=12, closed_loop=(2, 4))
    first, second = w.closed_loop_prompts(5000, 0), w.closed_loop_prompts(5000, 1)
    assert not {tuple(p[:4]) for p in first} & {tuple(p[:4]) for p in second}


def test_hymt_bench_prints_the_peer_rows_beside_each_closed_loop_run(tmp_path, capsys):
    model = tmp_path / "tiny"
    model.mkdir()
    (model / "config.json").write_text(json.dumps(ENGINE_TEST_CONFIG))
    peer_path = tmp_path / "peer.json"
    _results(_row(concurrency=2), _row(concurrency=3, quant="Q8_0"), _row(concurrency=1)).write_json(peer_path)
    out = tmp_path / "bench.json"
    assert main(["bench", "--random-weights", "--model", str(model), "--device", "cpu", "--num-requests", "6",
                 "--output-len", "3", "--batch1-requests", "2", "--warmup-requests", "1", "--prompt-len-min", "4",
                 "--prompt-len-max", "6", "--closed-loop", "2,3", "--peer-results", str(peer_path),
                 "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert [r["name"] for r in data["closed_loop"]] == ["native, 2 in flight", "native, 3 in flight"]
    assert data["peer"]["rows"][0]["concurrency"] == 2
    printed = capsys.readouterr().out
    assert "peer: llama-cpp-python 0.3.36" in printed
    table = printed[printed.index("peer: "):].splitlines()
    at_2 = [line for line in table if line.split()[:1] == ["2"]]
    assert "hymt float32 (native, 2 in flight)" in at_2[0] and "llama-server F16" in at_2[1]
    assert at_2[1].endswith("x")  # hymt's unquantized run is rated against F16


def test_hymt_bench_refuses_a_bad_peer_file_before_running(tmp_path, capsys):
    (tmp_path / "peer.json").write_text(json.dumps({"version": 1, "rows": "none"}))
    # the real-shape family would take minutes to run: the refusal must come first
    code = main(["bench", "--random-weights", "--family", "HY-MT1.5-1.8B", "--peer-results",
                 str(tmp_path / "peer.json")])
    assert code != 0
    assert "peer results: rows must be a list" in capsys.readouterr().err


def test_peer_results_only_go_with_an_offline_run(tmp_path, capsys):
    peer_path = tmp_path / "peer.json"
    _results().write_json(peer_path)
    for flags in (["--server", "http://127.0.0.1:9"], ["--compare-quantization", "int8"]):
        code = main(["bench", "--random-weights", "--family", "HY-MT1.5-1.8B", *flags, "--peer-results",
                     str(peer_path)])
        assert code != 0
        assert "--peer-results goes with an offline run" in capsys.readouterr().err
