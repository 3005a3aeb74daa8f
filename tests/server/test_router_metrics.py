"""The vllm:* load gauges on /metrics, parsed as a gateway's Prometheus scraper parses them."""
from __future__ import annotations

from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from hymt.engine.interface import EngineStats
from hymt.server.app import create_app
from hymt.server.router_metrics import KV_CACHE_USAGE, KV_CACHE_USAGE_V0, ROUTER_GAUGES, RUNNING, WAITING
from hymt.server.settings import ServerSettings
from hymt.testing import ScriptedEngine


def _scrape(client: TestClient) -> dict[str, tuple[str, float]]:
    """name -> (type, value) of every unlabelled sample, as a Prometheus scraper reads them."""
    found = {}
    for family in text_string_to_metric_families(client.get("/metrics").text):
        for sample in family.samples:
            if not sample.labels:
                found[sample.name] = (family.type, sample.value)
    return found


def test_gateway_gauges_follow_the_engine_stats(tiny_model_dir):
    from hymt.checkpoint import load_checkpoint
    from hymt.translate import Translator

    engine = ScriptedEngine(load_checkpoint(tiny_model_dir),
                            stats=EngineStats(num_running=7, num_waiting=3, kv_blocks_total=200, kv_blocks_used=50))
    app = create_app(ServerSettings(model=str(tiny_model_dir)),
                     translator_factory=lambda settings: Translator(str(tiny_model_dir), engine=engine, cache=False))
    with TestClient(app) as client:
        assert app.state.hymt.service.wait_ready(10)
        gauges = _scrape(client)
        assert {name: gauges[name][0] for name in ROUTER_GAUGES} == dict.fromkeys(ROUTER_GAUGES, "gauge")
        assert gauges[RUNNING][1] == 7 and gauges[WAITING][1] == 3
        assert gauges[KV_CACHE_USAGE][1] == 0.25 and gauges[KV_CACHE_USAGE_V0][1] == 0.25
        # the same numbers as hymt's own series
        assert gauges["hymt_num_requests_running"][1] == 7 and gauges["hymt_kv_cache_usage_ratio"][1] == 0.25
        engine.engine_stats = EngineStats(num_running=1, kv_blocks_total=200, kv_blocks_used=200)
        # the engine loop reads the stats as it turns: one request moves it on
        assert client.post("/api/translate", json={"text": "Hi.", "src": "en", "tgt": "de"}).status_code == 200
        gauges = _scrape(client)
        assert gauges[RUNNING][1] == 1 and gauges[WAITING][1] == 0 and gauges[KV_CACHE_USAGE][1] == 1.0


def test_gauges_are_zero_before_the_model_loads(tiny_model_dir):
    app = create_app(ServerSettings(model=str(tiny_model_dir)), load=False)
    with TestClient(app) as client:
        gauges = _scrape(client)
        assert [gauges[name][1] for name in ROUTER_GAUGES] == [0.0, 0.0, 0.0, 0.0]
