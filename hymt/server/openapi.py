"""The OpenAPI document (/openapi.json, /docs): typed bodies, error statuses, unique ids.

FastAPI derives paths and parameters from the routes; the handlers read their bodies
themselves (JSON or form, hymt/server/body.py), so what FastAPI cannot see is added here
from one table: each operation's request body (hymt/server/api_models.py; form encodings
where the protocol accepts forms), the error statuses it can answer in its protocol's
status codes and body shape, and an operation id made of method and path (routes served
under two prefixes, or for GET and POST at once, would otherwise share ids).
"""
from __future__ import annotations

import re
import warnings
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from hymt.server import api_models as m
from hymt.server.errors import protocol_of_path, wire_status

JSON = "application/json"
FORM = "application/x-www-form-urlencoded"
_REF = "#/components/schemas/{model}"

# (method, path without the /libretranslate or /deepl prefix) -> (body model(s), encodings)
BODIES: dict[tuple[str, str], tuple[tuple[type[BaseModel], ...], tuple[str, ...]]] = {
    ("post", "/api/translate"): ((m.NativeTranslateRequest,), (JSON,)),
    ("post", "/api/translate/stream"): ((m.NativeTranslateRequest,), (JSON,)),
    ("post", "/api/detect"): ((m.NativeDetectRequest,), (JSON,)),
    ("post", "/v1/chat/completions"): ((m.ChatCompletionRequest,), (JSON,)),
    ("post", "/v1/completions"): ((m.CompletionRequest,), (JSON,)),
    ("post", "/translate"): ((m.LibreTranslateRequest, m.DeepLXRequest, m.ImmersiveRequest), (JSON, FORM)),
    ("post", "/detect"): ((m.LibreDetectRequest,), (JSON, FORM)),
    ("post", "/v2/translate"): ((m.DeepLTranslateRequest,), (JSON, FORM)),
    ("post", "/v2/glossaries"): ((m.DeepLGlossaryRequest,), (JSON, FORM)),
    ("post", "/v2/languages"): ((m.DeepLLanguagesRequest,), (JSON, FORM)),
    ("post", "/deeplx/translate"): ((m.DeepLXRequest,), (JSON,)),
    ("post", "/v1/translate"): ((m.DeepLXRequest,), (JSON,)),
    ("post", "/imme"): ((m.ImmersiveRequest,), (JSON,)),
}
# What /docs "Try it out" fills in: a small valid body per model (a sample built from the
# schema alone would try every optional field, an unknown template or style among them).
EXAMPLES: dict[type[BaseModel], dict[str, Any]] = {
    m.NativeTranslateRequest: {"text": "Hello world.", "src": "en", "tgt": "de"},
    m.NativeDetectRequest: {"text": "Dies ist ein deutscher Satz."},
    m.ChatCompletionRequest: {"model": "hymt", "messages": [
        {"role": "user", "content": "Translate the following text into German:\n\nGood morning."}]},
    m.CompletionRequest: {"model": "hymt", "prompt": "Good morning", "max_tokens": 16},
    m.LibreTranslateRequest: {"q": "Hello world.", "source": "auto", "target": "es"},
    m.LibreDetectRequest: {"q": "Bonjour tout le monde."},
    m.DeepLTranslateRequest: {"text": ["Hello world."], "target_lang": "DE"},
    m.DeepLGlossaryRequest: {"name": "demo", "source_lang": "EN", "target_lang": "DE", "entries": "Hello\tHallo",
                             "entries_format": "tsv"},
    m.DeepLLanguagesRequest: {"type": "target"},
    m.DeepLXRequest: {"text": "Hello world.", "source_lang": "EN", "target_lang": "DE"},
    m.ImmersiveRequest: {"text_list": ["Hello world.", "Good night."], "source_lang": "auto", "target_lang": "zh-CN"},
}
# hymt's statuses (wire_status maps them per protocol).
_INPUT = (400, 401, 403, 408, 413, 415, 422)  # any route that reads a body
_MODEL = _INPUT + (429, 500, 503, 504)  # and runs the model
_DESCRIPTIONS = {
    400: "invalid input (the message names the field and the valid values)",
    401: "missing or wrong API key",
    403: "wrong API key, or a web page origin that may not use this server",
    404: "no such glossary",
    408: "the body did not arrive within --body-timeout",
    413: "over --max-body-bytes, --max-chars, --max-batch, --max-queue or the glossary limits",
    415: "a body type no protocol reads",
    422: "a field of the wrong type",
    429: "the queue is full (--max-queue): retry after Retry-After",
    500: "engine fault (the server log has the details under the error id)",
    503: "the model is loading, the engine is restarting, or the server is shutting down: retry after Retry-After",
    504: "over --request-timeout",
}
_OPEN = {"/health", "/ready", "/api/status", "/api/languages", "/languages", "/frontend/settings"}
_STREAMS = {"/api/translate/stream", "/v1/chat/completions", "/v1/completions"}


def install_openapi(app: FastAPI) -> None:
    """Make `app.openapi()` return the document built here (once, then cached)."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = build_document(app)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def build_document(app: FastAPI) -> dict[str, Any]:
    with warnings.catch_warnings():  # FastAPI's duplicate-id warnings: the ids are replaced below
        warnings.simplefilter("ignore", UserWarning)
        doc = get_openapi(title=app.title, version=app.version, routes=app.routes,
                          description="hymt: a translation server speaking its own API, OpenAI, LibreTranslate, "
                                      "DeepL, DeepLX and Immersive Translate. Errors come in each protocol's own "
                                      "shape.")
    schemas = doc.setdefault("components", {}).setdefault("schemas", {})
    for name in ("HTTPValidationError", "ValidationError"):  # FastAPI's 422 body: never sent (errors.py)
        schemas.pop(name, None)
    schemas.update(_component_schemas())
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            _complete(operation, method, path)
    return doc


def _component_schemas() -> dict[str, Any]:
    models: list[type[BaseModel]] = sorted({model for bodies, _ in BODIES.values() for model in bodies},
                                           key=lambda model: model.__name__)
    models += list(m.ERROR_MODELS.values())
    _, top = models_json_schema([(model, "validation") for model in models], ref_template=_REF)
    return dict(top.get("$defs", {}))


def _complete(operation: dict[str, Any], method: str, path: str) -> None:
    operation["operationId"] = operation_id(method, path)
    if path == "/ready":
        operation["responses"]["503"] = {"description": "not ready: loading, restarting, failed or draining",
                                         "content": {JSON: {"schema": {"type": "object"}}}}
        return
    operation["responses"].pop("422", None)  # FastAPI's own; ours is in the protocol's shape
    key = (method, re.sub(r"^/(libretranslate|deepl)(?=/)", "", path))
    protocol = protocol_of_path(path)
    body = BODIES.get(key)
    if body is not None:
        models, encodings = body
        refs = [{"$ref": _REF.format(model=model.__name__)} for model in models]
        schema = refs[0] if len(refs) == 1 else {"anyOf": refs}
        example = EXAMPLES[models[0]]
        operation["requestBody"] = {"required": True,
                                    "content": {enc: {"schema": schema, "example": example} for enc in encodings}}
    if key[1] in _STREAMS:
        operation["responses"]["200"]["content"]["text/event-stream"] = {"schema": {"type": "string"}}
    operation["responses"].update(_errors(protocol, _statuses(method, key[1], body is not None)))


def _statuses(method: str, path: str, has_body: bool) -> tuple[int, ...]:
    if path in _OPEN:
        return ()
    if not has_body and method != "post":
        return (401, 404) if "{" in path else (401,)
    model_routes = ("/api/translate", "/api/translate/stream", "/api/detect", "/v1/chat/completions",
                    "/v1/completions", "/translate", "/detect", "/v2/translate", "/deeplx/translate",
                    "/v1/translate", "/imme")
    statuses = _MODEL if path in model_routes else _INPUT
    return statuses + (404,) if path == "/v2/translate" else statuses  # an unknown glossary_id


def _errors(protocol: str, statuses: tuple[int, ...]) -> dict[str, Any]:
    ref = {"$ref": _REF.format(model=m.ERROR_MODELS[protocol].__name__)}
    out: dict[str, Any] = {}
    for status in statuses:
        code = str(wire_status(protocol, status))
        described = out.setdefault(code, {"description": "", "content": {JSON: {"schema": ref}}})
        text = _DESCRIPTIONS[status]
        described["description"] = f"{described['description']}; {text}" if described["description"] else text
    return out


def operation_id(method: str, path: str) -> str:
    """`post_api_translate_stream`, `get_v2_glossaries_glossary_id`: unique per method and path."""
    return f"{method}_{re.sub(r'[^0-9A-Za-z]+', '_', path).strip('_') or 'root'}"
