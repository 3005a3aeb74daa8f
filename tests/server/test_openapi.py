"""The OpenAPI document: typed bodies, documented errors, unique operation ids, and a bounded
schemathesis run over every operation (in-process, scripted engine) that finds no 5xx and no
undocumented status."""
from __future__ import annotations

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, Phase, settings
from schemathesis.checks import not_a_server_error, status_code_conformance

from hymt.server.app import create_app
from hymt.server.settings import ServerSettings
from hymt.testing import ScriptedEngine

EXAMPLES = 25  # per operation: about 25 s for the 47 operations on one core


def _app(model_dir):
    from hymt.checkpoint import load_checkpoint
    from hymt.translate import Translator

    checkpoint = load_checkpoint(model_dir)

    def factory(settings):
        return Translator(str(model_dir), engine=ScriptedEngine(checkpoint, lambda user, params: "ok"), cache=False)

    return create_app(ServerSettings(model=str(model_dir), max_chars=2000), translator_factory=factory)


@pytest.fixture(scope="module")
def app(tiny_model_dir):
    app = _app(tiny_model_dir)
    with TestClient(app):  # runs the lifespan: the model loads and stays loaded for the module
        assert app.state.hymt.service.wait_ready(30)
        yield app


def test_document_has_bodies_errors_and_unique_ids(app):
    doc = app.openapi()
    operations = [(path, method, op) for path, item in doc["paths"].items() for method, op in item.items()]
    ids = [op["operationId"] for _, _, op in operations]
    assert len(ids) == len(set(ids))
    for path, method, op in operations:
        if method == "post" and path not in ("/languages", "/libretranslate/languages", "/v2/usage",
                                             "/deepl/v2/usage"):
            assert "requestBody" in op, path
    translate = doc["paths"]["/api/translate"]["post"]
    assert translate["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/NativeTranslateRequest"}
    assert {"400", "413", "422", "429", "503", "504"} <= set(translate["responses"])
    libre = doc["paths"]["/translate"]["post"]
    assert "application/x-www-form-urlencoded" in libre["requestBody"]["content"]
    assert "422" not in libre["responses"] and "413" not in libre["responses"]  # LibreTranslate says 400
    assert doc["paths"]["/v2/translate"]["post"]["responses"]["400"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/DeepLError"}


def test_the_examples_of_try_it_out_succeed(app):
    """What /docs fills in for "Try it out" is a body the operation accepts."""
    client = TestClient(app)
    for path, item in app.openapi()["paths"].items():
        for method, op in item.items():
            for encoding, media in op.get("requestBody", {}).get("content", {}).items():
                kw = {"json": media["example"]} if encoding == "application/json" else {"data": media["example"]}
                r = client.request(method.upper(), path, **kw)
                assert r.status_code == 200, (method, path, encoding, r.text)


@pytest.fixture(scope="module")
def api(app):
    return schemathesis.openapi.from_asgi("/openapi.json", app)


schema = schemathesis.pytest.from_fixture("api")


@schema.parametrize()
@settings(max_examples=EXAMPLES, deadline=None, database=None, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=list(HealthCheck))
def test_no_server_errors_and_only_documented_statuses(case):
    case.call_and_validate(checks=[not_a_server_error, status_code_conformance])
