"""`hymt serve` from the installed console script, and its command line."""
from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from hymt.cli import build_parser
from hymt.cli.serve_cmd import settings_from_args
from hymt.errors import InvalidInputError


def test_console_script_serves_ui_and_health(hymt_server):
    assert Path(hymt_server.command[0]).name == "hymt", "the session server runs the installed console script"
    page = httpx.get(f"{hymt_server.url}/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "<html" in page.text.lower()
    assert httpx.get(f"{hymt_server.url}/health").json() == {"status": "ok"}
    static = httpx.get(f"{hymt_server.url}/static/app.js")
    assert static.status_code == 200 and "/api/" in static.text


def test_defaults_and_flags(monkeypatch):
    monkeypatch.delenv("HYMT_API_KEYS", raising=False)
    defaults = settings_from_args(build_parser().parse_args(["serve"]))
    assert (defaults.host, defaults.port, defaults.model) == ("127.0.0.1", 8000, "tencent/HY-MT1.5-1.8B")
    limits = (defaults.max_queue, defaults.max_chars, defaults.max_batch, defaults.request_timeout)
    assert limits == (256, 20000, 128, 120)
    assert defaults.api_keys == () and defaults.cache and defaults.engine == "native"
    monkeypatch.setenv("HYMT_API_KEYS", "env1,env2")
    args = build_parser().parse_args(["serve", "--api-key", "a", "--api-key", "b", "--no-cache", "--port", "9",
                                      "--engine", "transformers", "--cors-origins", "https://x.example"])
    settings = settings_from_args(args)
    assert settings.api_keys == ("a", "b", "env1", "env2") and not settings.cache
    assert settings.port == 9 and settings.engine == "transformers" and settings.cors_origins == ("https://x.example",)


@pytest.mark.parametrize("in_process", [False, True])
def test_memory_flags_reach_the_engine_config(monkeypatch, in_process):
    from hymt.server.service import default_factory

    argv = ["serve", "--quantization", "int4", "--kv-cache-dtype", "fp8", "--gpu-memory-gb", "3", "--no-prefix-cache",
            "--max-num-seqs", "64", "--max-num-batched-tokens", "2048", "--cuda-graph-max-tokens", "1024",
            "--enforce-eager", "--gpu-memory-utilization", "0.5"]
    args = build_parser().parse_args(argv + (["--engine-in-process"] if in_process else []))
    settings = settings_from_args(args)
    assert settings.engine_process is not in_process
    captured = {}

    class FakeTranslator:
        def __init__(self, model, **kw):
            captured.update(kw)

    class FakeEngineProcess:
        def __init__(self, spec, *, listen=None):
            captured["spec"], captured["listen"] = spec, listen

    monkeypatch.setattr("hymt.server.service.Translator", FakeTranslator)
    monkeypatch.setattr("hymt.engine.engine_process.EngineProcess", FakeEngineProcess)
    default_factory(settings)
    config = captured["engine_config"]
    assert (config.quantization, config.kv_cache_dtype, config.gpu_memory_gb) == ("int4", "fp8", 3.0)
    assert not config.enable_prefix_caching and config.enforce_eager
    steps = (config.max_num_seqs, config.max_num_batched_tokens, config.cuda_graph_max_tokens)
    assert steps == (64, 2048, 1024) and config.gpu_memory_utilization == 0.5
    if in_process:
        assert captured["engine"] == "native" and "spec" not in captured
    else:
        assert isinstance(captured["engine"], FakeEngineProcess)
        assert captured["spec"].backend == "native" and captured["spec"].config == config
        assert captured["listen"] is None  # one HTTP process: the engine serves it alone



def test_unset_engine_flags_keep_the_engine_defaults():
    from hymt.engine.config import EngineConfig

    settings = settings_from_args(build_parser().parse_args(["serve"]))
    assert settings.engine_config == EngineConfig()


@pytest.mark.parametrize(("flags", "field"), [
    (["--quantization", "int8"], "quantization"),
    (["--no-prefix-cache"], "enable_prefix_caching"),
    (["--max-num-seqs", "8"], "max_num_seqs"),
])
def test_native_engine_flags_are_refused_for_another_engine(flags, field):
    args = build_parser().parse_args(["serve", "--engine", "transformers", *flags])
    with pytest.raises(InvalidInputError, match=f"^{flags[0]}: {field} is a setting of the native engine") as err:
        settings_from_args(args)
    assert err.value.field == field


def test_settings_built_in_code_refuse_native_settings_for_another_engine():
    from hymt.engine.config import EngineConfig
    from hymt.server.settings import ServerSettings

    with pytest.raises(InvalidInputError, match="kv_cache_dtype is a setting of the native engine") as err:
        ServerSettings(engine="transformers", engine_config=EngineConfig(kv_cache_dtype="fp8"))
    assert err.value.field == "kv_cache_dtype"


def test_invalid_step_size_names_the_field():
    args = build_parser().parse_args(["serve", "--max-num-batched-tokens", "8", "--max-num-seqs", "64"])
    with pytest.raises(InvalidInputError, match="^--max-num-batched-tokens: max_num_batched_tokens must be") as err:
        settings_from_args(args)
    assert err.value.field == "max_num_batched_tokens"


# -- as a user runs it: `python -m hymt serve` in a subprocess of this checkout -------------------

REPO = Path(__file__).resolve().parents[2]
TEXT_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d (DEBUG|INFO|WARNING|ERROR|CRITICAL) +[\w.]+: ")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _serve(*args: str, port: int = 0, env: dict[str, str] | None = None, stdout=subprocess.PIPE) -> subprocess.Popen:
    """`python -m hymt serve --port PORT *args`, stderr piped (not a terminal)."""
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    environ = {k: v for k, v in os.environ.items() if k != "HYMT_LOG_FORMAT"}
    environ.update(PYTHONPATH=path, **(env or {}))
    return subprocess.Popen([sys.executable, "-m", "hymt", "serve", "--port", str(port or _free_port()), *args],
                            env=environ, stdout=stdout, stderr=subprocess.PIPE, text=True)


def test_help_shows_the_defaults():
    with _serve("--help") as proc:
        out, _ = proc.communicate(timeout=60)
    flat = " ".join(out.split())
    assert proc.returncode == 0
    for default in ("(default: 8000)", "(default: 127.0.0.1)", "(default: tencent/HY-MT1.5-1.8B)",
                    "(default: native)", "(default: 256)"):
        assert default in flat, default
    assert "token engine: native (hymt's own" in flat and "--log-format {text,json}" in flat
    assert "(default: None)" not in flat and "(default: False)" not in flat


@pytest.mark.parametrize("how", ["default-json", "flag-text", "env-text"])
def test_a_model_that_cannot_load_ends_the_server_with_its_reason(tmp_path, how):
    not_a_model = tmp_path / "not-a-model"
    not_a_model.mkdir()
    # The default case loads in the engine's child process, as users run it; the others in-process (faster).
    args, env = {"default-json": ([], {}), "flag-text": (["--log-format", "text", "--engine-in-process"], {}),
                 "env-text": (["--engine-in-process"], {"HYMT_LOG_FORMAT": "text"})}[how]
    with _serve("--model", str(not_a_model), *args, env=env) as proc:
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err
    log, _, tail = err.rpartition("hymt: error: the model could not be loaded: ")
    assert "is not a model checkpoint: config.json is missing" in tail and "Error:" not in tail
    assert "--keep-serving-on-load-error" in tail
    records = _log_records(log, "json" if how == "default-json" else "text")
    loggers = {logger for logger, _ in records}
    assert {"uvicorn.error", "hymt.server.supervisor"} <= loggers, "uvicorn's lines in the same format as hymt's"


def _log_records(log: str, fmt: str) -> list[tuple[str, str]]:
    """(logger, message) of every record; fails on a line in another format."""
    records = []
    for line in log.splitlines():
        if fmt == "json":
            entry = json.loads(line)  # the traceback is inside the record ("exc"), not on lines of its own
            records.append((entry["logger"], entry.get("message", "")))
        elif TEXT_LINE.match(line):
            name, _, message = line.split(" ", 3)[3].strip().partition(": ")
            records.append((name, message))
        else:  # a traceback's lines follow the record that logged it
            assert not line.startswith("{") and records and records[-1][0] == "hymt.server.supervisor", line
    assert records
    return records


def test_keep_serving_on_load_error_reports_it_on_ready(tmp_path):
    not_a_model = tmp_path / "not-a-model"
    not_a_model.mkdir()
    port = _free_port()
    with _serve("--model", str(not_a_model), "--keep-serving-on-load-error", "--engine-in-process", port=port,
                stdout=subprocess.DEVNULL) as proc:
        try:
            ready = _wait_for_failed_ready(f"http://127.0.0.1:{port}", proc)
            assert ready["status"] == "failed" and "config.json is missing" in ready["error"]
            time.sleep(1)  # longer than the load watcher's poll: it must not stop this server
            assert proc.poll() is None, "the server stays up to show the error"
            assert httpx.get(f"http://127.0.0.1:{port}/").status_code == 200
        finally:
            proc.terminate()
            _, err = proc.communicate(timeout=30)
    assert "hymt: error" not in err


def _wait_for_failed_ready(url: str, proc: subprocess.Popen) -> dict:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read()
        try:
            ready = httpx.get(f"{url}/ready", timeout=5)
            if ready.status_code == 503 and ready.json()["status"] == "failed":
                return ready.json()
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise AssertionError("/ready never reported the failed load")


def test_text_lines_for_access_records_and_the_format_choice(monkeypatch):
    import io
    import logging

    from hymt.server.logging import LOG_FORMAT_ENV, TextFormatter, resolve_log_format

    record = logging.LogRecord("hymt.access", logging.INFO, __file__, 1, "access", None, None)
    record.access = {"method": "POST", "path": "/api/translate", "route": "/api/translate", "status": 200,
                     "ms": 12.5, "protocol": "native"}
    assert TextFormatter().format(record).endswith(" INFO    hymt.access: POST /api/translate 200 12.5 ms native")

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv(LOG_FORMAT_ENV, raising=False)
    assert resolve_log_format(None, Terminal()) == "text" and resolve_log_format(None, io.StringIO()) == "json"
    assert resolve_log_format("json", Terminal()) == "json"
    monkeypatch.setenv(LOG_FORMAT_ENV, "text")
    assert resolve_log_format(None, io.StringIO()) == "text"
    monkeypatch.setenv(LOG_FORMAT_ENV, "xml")
    with pytest.raises(InvalidInputError, match="text, json"):
        resolve_log_format(None, io.StringIO())
