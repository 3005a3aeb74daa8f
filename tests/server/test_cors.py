"""CORS defaults and the cross-site guard: which web pages may call a local server, and what
they may not make it do. In-process over a scripted engine that records every prompt."""
from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from hymt.errors import InvalidInputError
from hymt.server.app import create_app
from hymt.server.origins import OriginPolicy
from hymt.server.settings import ServerSettings
from hymt.testing import ScriptedEngine

TRANSLATE = {"text": "hi", "src": "en", "tgt": "de"}
PREFLIGHT = {"Access-Control-Request-Method": "POST", "Access-Control-Request-Private-Network": "true"}


@pytest.fixture
def serve(tiny_model_dir):
    """serve(**settings) -> (TestClient, engine): the engine's `prompts` show what ran."""
    from hymt.checkpoint import load_checkpoint
    from hymt.translate import Translator

    checkpoint = load_checkpoint(tiny_model_dir)
    engines: list[ScriptedEngine] = []
    clients: list[TestClient] = []

    def factory(settings):
        engines.append(ScriptedEngine(checkpoint))
        return Translator(str(tiny_model_dir), engine=engines[-1], cache=False)

    def start(**settings):
        client = TestClient(create_app(ServerSettings(model=str(tiny_model_dir), **settings),
                                       translator_factory=factory))
        clients.append(client.__enter__())
        assert client.app.state.hymt.service.wait_ready(20)
        return client, engines[-1]

    yield start
    for client in clients:
        client.__exit__(None, None, None)


@pytest.mark.parametrize(("origin", "allowed"), [
    ("http://localhost:3000", True), ("http://127.0.0.1:8000", True), ("http://[::1]:9000", True),
    ("https://localhost", True), ("chrome-extension://bpoadfkcbjbfhfodiogcnhhhpibjhbnh", True),
    ("moz-extension://0a1b2c3d-4e5f", True), ("safari-web-extension://ABCDEF", True),
    ("https://evil.example", False), ("null", False), ("http://localhost.evil.example", False),
    ("http://127.0.0.1.evil.example", False), ("file://", False), ("garbage", False),
])
def test_default_origins(origin, allowed):
    assert OriginPolicy(ServerSettings().cors_origins).allows(origin) is allowed


def test_patterns_and_the_star():
    policy = OriginPolicy(("https://app.example", "http://192.168.1.5:*"))
    assert policy.allows("https://app.example") and policy.allows("https://app.example:443")
    assert not policy.allows("https://app.example:8443") and not policy.allows("http://app.example")
    assert policy.allows("http://192.168.1.5:8000") and not policy.allows("http://192.168.1.6:8000")
    star = OriginPolicy(("*",))
    assert star.allows("https://anything.example") and not star.allows("null")
    with pytest.raises(InvalidInputError, match="cors-origins"):
        ServerSettings(cors_origins=("not an origin",))


def test_preflights_and_private_network_only_for_allowed_origins(serve):
    client, _ = serve()
    ok = client.options("/imme", headers={"Origin": "chrome-extension://abc", **PREFLIGHT})
    assert ok.status_code == 204 and ok.headers["access-control-allow-origin"] == "chrome-extension://abc"
    assert ok.headers["access-control-allow-private-network"] == "true"
    plain = client.options("/imme", headers={"Origin": "chrome-extension://abc",
                                             "Access-Control-Request-Method": "POST"})
    assert "access-control-allow-private-network" not in plain.headers  # only when asked for
    for origin in ("https://evil.example", "null"):
        refused = client.options("/imme", headers={"Origin": origin, **PREFLIGHT})
        assert refused.status_code == 403
        assert "access-control-allow-origin" not in refused.headers
        assert "access-control-allow-private-network" not in refused.headers
    star, _ = serve(cors_origins=("*",))
    assert star.options("/imme", headers={"Origin": "null", **PREFLIGHT}).status_code == 403
    assert star.get("/health", headers={"Origin": "null"}).headers.get("access-control-allow-origin") is None


@pytest.mark.parametrize("cors", [None, ("https://app.example",)])
def test_simple_cross_site_posts_never_run(serve, cors):
    """The requests a web page can send without a preflight: forms and text/plain bodies."""
    client, engine = serve(**({"cors_origins": cors} if cors else {}))
    warm_up = len(engine.prompts)
    evil = {"Origin": "https://evil.example"}
    text_plain = client.post("/api/translate", content=b'{"text": "hi", "tgt": "de"}',
                             headers={**evil, "Content-Type": "text/plain"})
    assert text_plain.status_code == 415 and text_plain.json()["error"]["type"] == "unsupported_media_type"
    form = client.post("/translate", data={"q": "hi", "source": "en", "target": "de"}, headers=evil)
    assert form.status_code == 403 and "--cors-origins" in form.json()["error"]
    no_type = client.post("/imme", content=b'{"text_list": ["hi"], "target_lang": "de"}', headers=evil)
    assert no_type.status_code == 403
    sec_fetch = client.post("/api/translate", json=TRANSLATE, headers={"Sec-Fetch-Site": "cross-site"})
    assert sec_fetch.status_code == 403
    assert len(engine.prompts) == warm_up, "none of them reached the engine"


def test_allowed_and_same_origin_pages_and_plain_clients_work(serve):
    client, engine = serve(cors_origins=("https://app.example",))
    assert client.post("/api/translate", json=TRANSLATE, headers={"Origin": "https://app.example"}).status_code == 200
    assert client.post("/translate", data={"q": "hi", "source": "en", "target": "de"}).status_code == 200  # no Origin
    # The web UI on this server: its own origin, under a loopback host name.
    own = client.post("/api/translate", json=TRANSLATE,
                      headers={"Origin": "http://127.0.0.1:8000", "Host": "127.0.0.1:8000"})
    assert own.status_code == 200
    # A site whose name resolves to 127.0.0.1 (DNS rebinding) is same-origin in name only.
    rebound = client.post("/api/translate", json=TRANSLATE,
                          headers={"Origin": "http://evil.example:8000", "Host": "evil.example:8000"})
    assert rebound.status_code == 403


def test_same_origin_on_a_lan_address(serve):
    client, _ = serve(host="0.0.0.0")
    page = {"Origin": "http://192.168.1.5:8000", "Host": "192.168.1.5:8000"}
    assert client.post("/api/translate", json=TRANSLATE, headers=page).status_code == 200
    other = {"Origin": "http://192.168.1.9:8000", "Host": "192.168.1.5:8000"}
    assert client.post("/api/translate", json=TRANSLATE, headers=other).status_code == 403
