"""The OpenAPI document: typed bodies, documented errors, unique operation ids, examples that
/docs "Try it out" can send, and a bounded schemathesis run over every operation (in-process,
scripted engine) that finds no 5xx and no undocumented status."""
from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest
import schemathesis
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, Phase, settings
from schemathesis.checks import not_a_server_error, status_code_conformance

from hymt.server.app import create_app
from hymt.server.glossary_store import GlossarySettings
from hymt.server.openapi import FORM, JSON, MULTIPART
from hymt.server.settings import ServerSettings
from hymt.testing import ScriptedEngine

EXAMPLES = 25  # per operation: about 20 s for the 80 operations on one core
#: The file "Try it out" leaves the user to pick.
SAMPLE_DOCUMENT = ("hello.txt", b"Hello world.\n", "text/plain")


def _app(model_dir: Path, data_dir: Path, *, load: bool = True) -> FastAPI:
    from hymt.checkpoint import load_checkpoint
    from hymt.translate import Translator

    checkpoint = load_checkpoint(model_dir)

    def factory(settings):
        return Translator(str(model_dir), engine=ScriptedEngine(checkpoint, lambda user, params: "ok"), cache=False)

    settings = ServerSettings(model=str(model_dir), max_chars=2000, jobs_dir=str(data_dir / "jobs"),
                              glossaries=GlossarySettings(path=data_dir / "glossaries.sqlite3"))
    return create_app(settings, translator_factory=factory, load=load)


@pytest.fixture(scope="module")
def client(tiny_model_dir, tmp_path_factory):
    app = _app(tiny_model_dir, tmp_path_factory.mktemp("openapi"))
    with TestClient(app) as client:  # the lifespan runs: the model and the job runner stay up for the module
        assert app.state.hymt.service.wait_ready(30)
        yield client


def _operations(doc: dict) -> list[tuple[str, str, dict]]:
    return [(path, method, op) for path, item in doc["paths"].items() for method, op in item.items()]


def _component(doc: dict, media: dict) -> dict:
    return doc["components"]["schemas"][media["schema"]["$ref"].rsplit("/", 1)[1]]


def _success(op: dict) -> int:
    (status,) = [int(code) for code in op["responses"] if code.startswith("2")]
    return status


def test_document_has_bodies_errors_and_unique_ids(client):
    doc = client.app.openapi()
    operations = _operations(doc)
    ids = [op["operationId"] for _, _, op in operations]
    assert len(ids) == len(set(ids))
    for path, method, op in operations:
        if method in ("post", "put", "patch") and path not in ("/languages", "/libretranslate/languages",
                                                               "/v2/usage", "/deepl/v2/usage"):
            assert "requestBody" in op, (method, path)
            assert "400" in op["responses"], (method, path)
        if "{" in path:
            assert "404" in op["responses"], (method, path)
    translate = doc["paths"]["/api/translate"]["post"]
    assert translate["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/NativeTranslateRequest"}
    assert {"400", "413", "422", "429", "503", "504"} <= set(translate["responses"])
    libre = doc["paths"]["/translate"]["post"]
    assert FORM in libre["requestBody"]["content"]
    assert "422" not in libre["responses"] and "413" not in libre["responses"]  # LibreTranslate says 400
    assert doc["paths"]["/v2/translate"]["post"]["responses"]["400"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/DeepLError"}


@pytest.mark.parametrize("path", ["/api/documents", "/v2/document", "/deepl/v2/document", "/translate_file",
                                  "/libretranslate/translate_file"])
def test_uploads_are_multipart_with_a_binary_file(client, path):
    doc = client.app.openapi()
    (media,) = doc["paths"][path]["post"]["requestBody"]["content"].values()
    assert list(doc["paths"][path]["post"]["requestBody"]["content"]) == [MULTIPART]
    schema = _component(doc, media)
    file = schema["properties"]["file"]
    assert (file["type"], file["format"]) == ("string", "binary")
    assert "file" in schema["required"] and len(schema["required"]) == 2  # the file and the target language
    assert all(prop.get("default", "") is not None for prop in schema["properties"].values())  # forms have no null


def _docs_form(schema: dict) -> dict[str, str]:
    """The text parts /docs "Try it out" fills in for an upload form: each property's first
    example, else its default, else its first enum value, else a placeholder of its type."""
    form = {}
    for name, prop in schema["properties"].items():
        if name == "file":
            continue
        value = next(iter(prop.get("examples", ())), prop.get("default", next(iter(prop.get("enum", ())), None)))
        value = {"string": "string", "boolean": True}[prop["type"]] if value is None else value
        form[name] = str(value).lower() if isinstance(value, bool) else value
    return form


@pytest.mark.parametrize("path", ["/api/documents", "/v2/document", "/translate_file"])
def test_the_upload_form_of_try_it_out_is_accepted(client, path):
    """Every optional part of the form has a value /docs may send (an empty one: left out)."""
    doc = client.app.openapi()
    op = doc["paths"][path]["post"]
    form = _docs_form(_component(doc, op["requestBody"]["content"][MULTIPART]))
    assert "string" not in form.values()
    r = client.post(path, data=form, files={"file": SAMPLE_DOCUMENT})
    assert r.status_code == _success(op), (form, r.text)


def test_every_upload_route_is_bounded_by_the_file_limit(client):
    """A multipart route missing from UPLOAD_PATHS would cap its files at --max-body-bytes."""
    from hymt.server.body_limits import UPLOAD_PATHS

    paths = client.app.openapi()["paths"]
    uploads = {path for path, ops in paths.items()
               if MULTIPART in ops.get("post", {}).get("requestBody", {}).get("content", {})}
    assert uploads == UPLOAD_PATHS


def test_success_statuses_queries_and_protocol_shapes(client):
    paths = client.app.openapi()["paths"]
    assert _success(paths["/api/documents"]["post"]) == 201
    assert _success(paths["/v2/glossaries"]["post"]) == 201
    assert _success(paths["/deepl/v3/glossaries"]["post"]) == 201
    assert _success(paths["/v3/glossaries/{glossary_id}"]["delete"]) == 204
    assert "content" not in paths["/v3/glossaries/{glossary_id}/dictionaries"]["delete"]["responses"]["204"]
    assert list(paths["/api/documents/{job_id}/result"]["get"]["responses"]["200"]["content"]) == [
        "application/octet-stream"]
    assert "409" in paths["/api/documents/{job_id}/result"]["get"]["responses"]
    assert list(paths["/api/documents/{job_id}/events"]["get"]["responses"]["200"]["content"]) == [
        "text/event-stream"]
    query = [p for p in paths["/v3/glossaries/{glossary_id}/entries"]["get"]["parameters"] if p["in"] == "query"]
    assert [(p["name"], p["required"]) for p in query] == [("source_lang", True), ("target_lang", True)]
    v3 = paths["/v3/glossaries"]["post"]["responses"]  # DeepL's: 403 for a key, DeepL's error body, 456 full
    assert "401" not in v3 and {"403", "456"} <= set(v3)
    assert v3["400"]["content"][JSON]["schema"] == {"$ref": "#/components/schemas/DeepLError"}
    assert set(paths["/download_file/{name}"]["get"]["responses"]) == {"200", "404"}  # the link is the key
    assert "401" not in paths["/api/documents/formats"]["get"]["responses"]


def _example(doc: dict, path: str, method: str, encoding: str) -> dict:
    return dict(doc["paths"][path][method]["requestBody"]["content"][encoding]["example"])


def _send(client: TestClient, method: str, url: str, encoding: str, body: dict) -> httpx.Response:
    if encoding == JSON:
        return client.request(method.upper(), url, json=body)
    if encoding == MULTIPART:
        return client.request(method.upper(), url, data=body, files={"file": SAMPLE_DOCUMENT})
    return client.request(method.upper(), url, data=body)


def _filled(client: TestClient, doc: dict, path: str) -> tuple[str, dict]:
    """`path` with its id taken from a resource that the create operation of its prefix made
    from its own example, and the body fields that go with that id (a document's key)."""
    prefix = "/deepl" if path.startswith("/deepl/") else ""
    if "{glossary_id}" in path:
        made = client.post(f"{prefix}/v3/glossaries", json=_example(doc, f"{prefix}/v3/glossaries", "post", JSON))
        assert made.status_code == 201, made.text
        return path.replace("{glossary_id}", made.json()["glossary_id"]), {}
    if "{document_id}" in path:
        upload = f"{prefix}/v2/document"
        made = _send(client, "post", upload, MULTIPART, _example(doc, upload, "post", MULTIPART))
        assert made.status_code == 200, made.text
        document_id, key = made.json()["document_id"], made.json()["document_key"]
        deadline = time.monotonic() + 30
        while client.post(f"{upload}/{document_id}", json={"document_key": key}).json()["status"] != "done":
            assert time.monotonic() < deadline, "the example document was not translated within 30 s"
            time.sleep(0.05)
        return path.replace("{document_id}", document_id), {"document_key": key}
    assert "{" not in path, path
    return path, {}


def test_the_examples_of_try_it_out_succeed(client):
    """What /docs fills in for "Try it out" is a body the operation accepts (an upload with the
    file the user picks; an id from a resource made by its create operation's example)."""
    doc = client.app.openapi()
    tried = 0
    for path, method, op in _operations(doc):
        for encoding, media in op.get("requestBody", {}).get("content", {}).items():
            url, fields = _filled(client, doc, path)
            r = _send(client, method, url, encoding, {**media["example"], **fields})
            assert r.status_code == _success(op), (method, path, encoding, r.text)
            tried += 1
    assert tried >= 40


@pytest.fixture(scope="module")
def api(tiny_model_dir, tmp_path_factory):
    """The schema of an app of its own: schemathesis runs its lifespan (the job runner lives
    in schemathesis's event loop); the model is loaded before the first case."""
    app = _app(tiny_model_dir, tmp_path_factory.mktemp("fuzz"), load=False)
    service = app.state.hymt.service
    service.start()
    try:
        assert service.wait_ready(30)
        yield schemathesis.openapi.from_asgi("/openapi.json", app)
    finally:
        service.close()


schema = schemathesis.pytest.from_fixture("api")


@schema.parametrize()
@settings(max_examples=EXAMPLES, deadline=None, database=None, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=list(HealthCheck))
def test_no_server_errors_and_only_documented_statuses(case):
    case.call_and_validate(checks=[not_a_server_error, status_code_conformance])
