"""`hymt bench` end to end on CPU: tiny random-weight model, tiny counts, and --server mode."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from hymt.cli import main
from hymt.testing import ENGINE_TEST_CONFIG

TESTS = Path(__file__).resolve().parents[1]
SMALL = ["--num-requests", "8", "--output-len", "4", "--batch1-requests", "2", "--warmup-requests", "2",
         "--prompt-len-min", "5", "--prompt-len-max", "12"]


def _stand_in_server_class():
    spec = importlib.util.spec_from_file_location("stand_in_server", TESTS / "bench" / "stand_in_server.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.StandInServer


#: Fields a run fills only where the engine stamps each request's times, counts its steps and
#: times its phases (the native engine; not transformers').
NATIVE_FIELDS = ("latency_ms_p50", "latency_ms_p90", "steps", "phases")


@pytest.fixture
def profiled(monkeypatch):
    """The engine times its step phases (HYMT_PROFILE=cpu), so a run's `phases` is filled too."""
    monkeypatch.setenv("HYMT_PROFILE", "cpu")


def assert_filled(value, path="result"):
    """No None and no NaN anywhere under `value`, but in a baseline's NATIVE_FIELDS."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k in NATIVE_FIELDS and path.startswith("baselines"):
                continue
            assert_filled(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            assert_filled(v, f"{path}[{i}]")
    else:
        assert value is not None, f"{path} is None"
        assert value == value, f"{path} is NaN"


@pytest.fixture
def model_dir(tmp_path):
    """A folder with only the tiny engine-test config.json (for --random-weights)."""
    path = tmp_path / "tiny"
    path.mkdir()
    (path / "config.json").write_text(json.dumps(ENGINE_TEST_CONFIG))
    return path


def _bench_json(model_dir, tmp_path, *flags: str) -> dict:
    """`hymt bench --random-weights` on the tiny config with SMALL and `flags`; its JSON."""
    out = tmp_path / "bench.json"
    assert main(["bench", "--random-weights", "--model", str(model_dir), *SMALL, *flags, "--json", str(out)]) == 0
    return json.loads(out.read_text())


def test_offline_bench_with_transformers_baselines_writes_every_field(model_dir, tmp_path, capsys, profiled):
    data = _bench_json(model_dir, tmp_path, "--baseline", "transformers", "--baseline-batch-size", "4",
                       "--device", "cpu")
    for key in ("native", "native_latency", "baselines", "baseline_latency", "ratios"):
        assert_filled(data[key], key)
    for key in ("date", "device_name", "torch_version", "transformers_version", "command"):
        assert data["env"][key]
    command = data["env"]["command"]
    assert command.startswith("HYMT_PROFILE=cpu hymt bench ") and "--baseline transformers" in command
    assert f"--model {model_dir}" in command and "--num-requests 8" in command
    assert data["native"]["num_requests"] == 8 and data["native"]["output_tokens"] == 32
    assert data["native_latency"]["num_requests"] == 2
    assert [b["name"] for b in data["baselines"]] == [
        "transformers generate, batch 1", "transformers generate, padded batches of 4",
        "transformers continuous batching"]
    assert all(b["output_tokens"] == b["num_requests"] * 4 for b in data["baselines"])
    assert set(data["ratios"]) == {b["name"] for b in data["baselines"]} | {"latency_p50"}
    assert data["skipped"] == []
    report = data["memory"]["engine_report"]
    assert report["weights_bytes"] > 0 and report["kv_cache_bytes"] > 0 and report["num_kv_blocks"] > 0
    printed = capsys.readouterr().out
    assert "== hymt bench ==" in printed and "transformers continuous batching" in printed
    assert "engine memory:" in printed and "command: HYMT_PROFILE=cpu hymt" in printed


def test_offline_bench_without_baseline(model_dir, tmp_path, capsys, profiled):
    data = _bench_json(model_dir, tmp_path)
    assert data["baselines"] == [] and data["ratios"] == {} and data["baseline_latency"] is None
    assert data["closed_loop"] == []
    assert_filled(data["native"], "native")


def test_closed_loop_run_is_reported_beside_the_all_at_once_run(model_dir, tmp_path, capsys, profiled):
    data = _bench_json(model_dir, tmp_path, "--closed-loop", "3")
    [closed] = data["closed_loop"]
    assert_filled(closed, "closed_loop")
    assert closed["name"] == "native, 3 in flight" and closed["num_requests"] == data["native"]["num_requests"]
    assert "native, 3 in flight" in capsys.readouterr().out


def test_compare_quantization_runs_every_scheme_on_the_same_weights(model_dir, tmp_path, capsys, profiled):
    data = _bench_json(model_dir, tmp_path, "--device", "cpu", "--compare-quantization", "int8,int4,fp8",
                       "--quality-prompts", "4")
    runs = {r["scheme"]: r for r in data["runs"]}
    assert list(runs) == ["bf16", "int8", "int4", "fp8"]  # the reference is put first
    assert runs["bf16"]["logits"] is None
    weights = {name: r["bench"]["memory"]["engine_report"]["weights_bytes"] for name, r in runs.items()}
    assert weights["int4"] < weights["int8"] < weights["bf16"]
    for name in ("int8", "int4", "fp8"):
        err = runs[name]["logits"]
        assert err["positions"] >= 4 * 5  # 4 prompts of at least 5 tokens, every position compared
        assert 0 < err["rel_l2"] < 0.5 and 0.5 <= err["top1"] <= 1.0
        assert runs[name]["bench"]["options"]["engine"]["quantization"] == name
        assert_filled(runs[name]["bench"]["native"], "native")
    assert runs["int8"]["logits"]["rel_l2"] < runs["int4"]["logits"]["rel_l2"]  # 8 bits beat 4
    printed = capsys.readouterr().out
    assert "== hymt bench --compare-quantization ==" in printed
    table = [line for line in printed.splitlines() if line.split(" ", 1)[0] in ("scheme", *runs)]
    assert len(table) == 1 + len(runs)
    assert len({line.index(" GB") for line in table[1:]} | {table[0].index("weights") + 4}) == 1  # columns line up


def test_compare_quantization_rejects_unknown_schemes(model_dir, capsys):
    rc = main(["bench", "--random-weights", "--model", str(model_dir), *SMALL, "--device", "cpu",
               "--compare-quantization", "int8,nf4"])
    assert rc != 0
    assert "['nf4']; valid: a comma list of bf16, none, float, int8, int4, fp8" in capsys.readouterr().err


def test_server_mode_drives_the_native_api(tmp_path, capsys):
    out = tmp_path / "server.json"
    with _stand_in_server_class()(api_key="k", reject_every=4) as server:
        rc = main(["bench", "--server", server.url, "--concurrency", "3", "--num-requests", "12",
                   "--api-key", "k", "--output-len", "6", "--json", str(out)])
    assert rc == 0
    data = json.loads(out.read_text())
    assert data["completed"] == 9 and data["errors"] == 3 and data["error_kinds"] == {"429": 3}
    assert data["completion_tokens"] == 54 and data["concurrency"] == 3
    printed = capsys.readouterr().out
    assert "== hymt bench --server ==" in printed and "errors 3" in printed


def test_engine_flags_reach_the_engine_and_the_recorded_command(model_dir, tmp_path):
    data = _bench_json(model_dir, tmp_path, "--no-prefix-cache", "--max-num-batched-tokens", "512")
    assert data["options"]["engine"] == {"enable_prefix_caching": False, "max_num_batched_tokens": 512, "seed": 0}
    assert "--no-prefix-cache" in data["env"]["command"] and "--max-num-batched-tokens 512" in data["env"]["command"]


def test_engine_settings_from_the_environment_are_recorded_with_the_command(model_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("HYMT_DISABLE_TRITON", "1")
    monkeypatch.setenv("HYMT_OVERLAP", "0")
    command = _bench_json(model_dir, tmp_path)["env"]["command"]
    assert command.startswith("HYMT_OVERLAP=0 HYMT_DISABLE_TRITON=1 hymt bench ")


def test_missing_model_is_a_clear_error(capsys):
    assert main(["bench", "--num-requests", "2"]) == 2
    assert "--model" in capsys.readouterr().err


def test_bad_engine_knob_names_the_field(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["bench", "--random-weights", "--family", "HY-MT1.5-1.8B", "--quantization", "int3"])
    assert main(["bench", "--random-weights", "--family", "HY-MT1.5-1.8B", "--max-num-seqs", "0"]) == 2
    assert "max_num_seqs" in capsys.readouterr().err
