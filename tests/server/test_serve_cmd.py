"""`hymt serve` from the installed console script, and its command line."""
from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from hymt.cli import build_parser
from hymt.cli.serve_cmd import settings_from_args


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
    assert (defaults.max_queue, defaults.max_chars, defaults.max_batch, defaults.request_timeout) == (256, 20000, 128, 120)
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

    argv = ["serve", "--quantization", "int4", "--kv-cache-dtype", "fp8", "--gpu-memory-gb", "3"]
    args = build_parser().parse_args(argv + (["--engine-in-process"] if in_process else []))
    settings = settings_from_args(args)
    assert (settings.quantization, settings.kv_cache_dtype, settings.gpu_memory_gb) == ("int4", "fp8", 3.0)
    assert settings.engine_process is not in_process
    captured = {}

    class FakeTranslator:
        def __init__(self, model, **kw):
            captured.update(kw)

    class FakeEngineProcess:
        def __init__(self, spec):
            captured["spec"] = spec

    monkeypatch.setattr("hymt.server.service.Translator", FakeTranslator)
    monkeypatch.setattr("hymt.engine.engine_process.EngineProcess", FakeEngineProcess)
    default_factory(settings)
    config = captured["engine_config"]
    assert (config.quantization, config.kv_cache_dtype, config.gpu_memory_gb) == ("int4", "fp8", 3.0)
    if in_process:
        assert captured["engine"] == "native" and "spec" not in captured
    else:
        assert isinstance(captured["engine"], FakeEngineProcess)
        assert captured["spec"].backend == "native" and captured["spec"].config == config
