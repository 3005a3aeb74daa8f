"""Prometheus /metrics and the structured access log of the session server."""
from __future__ import annotations

import json
import re


def _series(text: str) -> dict[str, float]:
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            out[name] = float(value)
    return out


def test_metrics_cover_requests_engine_and_queue(client):
    assert client.post("/api/translate", json={"text": "Count me.", "tgt": "de"}).status_code == 200
    assert client.post("/translate", json={"q": "Count me too.", "source": "en", "target": "de"}).status_code == 200
    assert client.post("/api/translate", json={"text": "x", "tgt": "zz"}).status_code == 400
    r = client.get("/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    series = _series(r.text)
    assert series['hymt_requests_total{protocol="native",route="/api/translate",status="200"}'] >= 1
    assert series['hymt_requests_total{protocol="native",route="/api/translate",status="400"}'] >= 1
    assert series['hymt_requests_total{protocol="libretranslate",route="/translate",status="200"}'] >= 1
    assert series['hymt_request_duration_seconds_count{protocol="native",route="/api/translate"}'] >= 2
    assert series["hymt_generation_tokens_total"] > 0 and series["hymt_prompt_tokens_total"] > 0
    assert 0 < series["hymt_generation_steps_total"] <= series["hymt_generation_tokens_total"]
    # On a CPU no step has a CUDA graph: every step ran eagerly, with no padding rows.
    steps = {kind: series[f'hymt_engine_steps_total{{kind="{kind}"}}']
             for kind in ("decode_graph", "step_graph", "eager")}
    assert steps["decode_graph"] == steps["step_graph"] == 0
    assert steps["eager"] >= series["hymt_generation_steps_total"]
    assert series["hymt_engine_graph_padding_tokens_total"] == 0
    assert series["hymt_engine_step_tokens_total"] >= series["hymt_prompt_tokens_total"]
    assert series["hymt_model_ready"] == 1 and series["hymt_queue_limit"] == 256
    assert series['hymt_translated_items_total{protocol="native"}'] >= 1
    for name in ("hymt_queue_depth", "hymt_num_requests_running", "hymt_num_requests_waiting",
                 "hymt_kv_blocks_used", "hymt_kv_blocks_free", "hymt_gpu_memory_used_bytes",
                 "hymt_cache_hits_total", "hymt_quality_retries_total"):
        assert name in series, name
    assert series["hymt_kv_blocks_free"] > 0
    # CPU of the HTTP process and of the engine's own process (`hymt bench --server` divides them
    # by the requests of a run): the session server runs its engine in a child process.
    assert series["process_cpu_seconds_total"] > 0 and series["hymt_engine_process_cpu_seconds_total"] > 0
    # Labels: protocol, route, status only; never addresses or keys.
    labels = set(re.findall(r"(\w+)=\"", r.text))
    assert labels <= {"protocol", "route", "status", "le", "reason", "phase", "kind"}


def test_unmatched_paths_do_not_create_series(client):
    client.get("/no/such/path/12345")
    text = client.get("/metrics").text
    assert "12345" not in text and 'route="unmatched"' in text


def test_access_log_is_json_without_bodies_or_queries(client, hymt_server):
    secret_text = "UNIQUE-BODY-TEXT-31337"
    client.post("/api/translate?token=QUERY-SECRET-777", json={"text": secret_text, "tgt": "de"})
    log = hymt_server.log_text()
    assert secret_text not in log and "QUERY-SECRET-777" not in log
    entries = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    access = [e for e in entries if e.get("logger") == "hymt.access" and e.get("path") == "/api/translate"]
    assert access, "every request is logged"
    entry = access[-1]
    assert {"method", "path", "status", "ms", "protocol", "route"} <= set(entry)
    assert entry["method"] == "POST" and entry["protocol"] == "native" and isinstance(entry["ms"], float)


def test_the_engine_process_logs_json_lines_too(hymt_server):
    log = hymt_server.log_text()
    entries = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    # The memory report is logged by the engine's model runner, which runs in the child process.
    runner = [e for e in entries if e.get("logger", "").startswith("hymt.engine")]
    assert runner, "the engine child's log lines reach the server log as JSON"
    assert not [line for line in log.splitlines() if "[engine pid" in line]


def test_bench_reports_the_cpu_each_server_process_spent(hymt_server):
    from hymt.bench.report import format_server_load
    from hymt.bench.server_load import ServerLoadOptions, run_server_load

    result = run_server_load(ServerLoadOptions(url=hymt_server.url, concurrency=2, num_requests=6, words=6,
                                               output_len=4))
    assert result.completed == 6
    assert result.server_cpu_s is not None and result.server_cpu_s > 0
    assert result.engine_cpu_s is not None and result.engine_cpu_s > 0
    assert "server CPU per request: HTTP process" in format_server_load(result)
    # The engine's steps during the run, all eager on a CPU (the run's and warm-up's own steps)
    steps = result.engine_steps
    assert steps is not None and steps.eager == steps.steps > 0 and steps.tokens > 0
    assert "engine steps during the run: " in format_server_load(result)


def test_runs_of_the_load_generator_send_new_texts_that_the_prefix_cache_cannot_serve(hymt_server):
    from hymt.bench.report import format_server_load
    from hymt.bench.server_load import ServerLoadOptions, run_server_load

    def run(**tag: str):
        return run_server_load(ServerLoadOptions(url=hymt_server.url, concurrency=2, num_requests=6, words=12,
                                                 output_len=2, **tag))

    first, second = run(), run()
    again = run(run_tag=first.run_tag)  # the first run's texts, sent again on purpose
    assert first.run_tag != second.run_tag
    assert first.engine_prompt_tokens and second.engine_prompt_tokens and again.engine_prompt_tokens is not None
    # Only the prompt template is shared: a new run costs what the first one did...
    assert second.engine_prompt_tokens >= 0.8 * first.engine_prompt_tokens
    # ...where repeated texts are served from the prefix cache (but their last partial block).
    assert again.engine_prompt_tokens < 0.5 * first.engine_prompt_tokens
    assert f"prompt tokens computed by the engine: {second.engine_prompt_tokens} of " in format_server_load(second)
