"""The OpenAPI document (/openapi.json, /docs): typed bodies, error statuses, unique ids.

FastAPI derives paths and path parameters from the routes; the handlers read their bodies
and queries themselves (JSON, form or multipart: hymt/server/body.py, jobs/upload.py), so
what FastAPI cannot see is added here from one table, OPERATIONS: each operation's request
body (hymt/server/api_models.py; form encodings where the protocol accepts forms, multipart
with a binary `file` part for uploads) with an example "Try it out" can send, its query
parameters, its success status and media types (201 created, 204 deleted, a file, an event
stream), the error statuses it can answer in its protocol's status codes and body shape, and
an operation id made of method and path (routes served under two prefixes, or for GET and
POST at once, would otherwise share ids).
"""
from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from hymt.server import api_models as m
from hymt.server.errors import protocol_of_path, wire_status

JSON = "application/json"
FORM = "application/x-www-form-urlencoded"
MULTIPART = "multipart/form-data"
FILE = "application/octet-stream"  # a translated document, in its format's own media type
EVENTS = "text/event-stream"
_REF = "#/components/schemas/{model}"
_RUNS = (429, 500, 503, 504)  # what a route that runs the model adds to the input errors


@dataclass(frozen=True)
class Described:
    """What FastAPI cannot see of one operation (its handler reads the request itself).

    Attributes:
        bodies: the request body's model(s) (several: any of them).
        encodings: the body's media types.
        query: the query parameters' model, for handlers that read them from the request.
        success: the status of a successful answer.
        media: the successful answer's media types (a stream, a file, TSV).
        errors: hymt statuses beyond those every route of its kind answers (`_statuses`).
    """

    bodies: tuple[type[BaseModel], ...] = ()
    encodings: tuple[str, ...] = (JSON,)
    query: type[BaseModel] | None = None
    success: int = 200
    media: tuple[str, ...] = (JSON,)
    errors: tuple[int, ...] = ()


# (method, path without the /libretranslate or /deepl prefix) -> what the document says of it
OPERATIONS: dict[tuple[str, str], Described] = {
    ("post", "/api/translate"): Described((m.NativeTranslateRequest,), errors=_RUNS),
    ("post", "/api/translate/stream"): Described((m.NativeTranslateRequest,), media=(EVENTS,), errors=_RUNS),
    ("post", "/api/detect"): Described((m.NativeDetectRequest,), errors=_RUNS),
    ("post", "/api/documents"): Described((m.NativeDocumentUpload,), (MULTIPART,), success=201),
    ("get", "/api/documents/{job_id}/result"): Described(media=(FILE,), errors=(409,)),
    ("get", "/api/documents/{job_id}/events"): Described(media=(EVENTS,)),
    ("post", "/v1/chat/completions"): Described((m.ChatCompletionRequest,), media=(JSON, EVENTS), errors=_RUNS),
    ("post", "/v1/completions"): Described((m.CompletionRequest,), media=(JSON, EVENTS), errors=_RUNS),
    ("post", "/translate"): Described((m.LibreTranslateRequest, m.DeepLXRequest, m.ImmersiveRequest), (JSON, FORM),
                                      errors=_RUNS),
    ("post", "/detect"): Described((m.LibreDetectRequest,), (JSON, FORM), errors=_RUNS),
    ("post", "/translate_file"): Described((m.LibreTranslateFileUpload,), (MULTIPART,), errors=(500,)),
    ("get", "/download_file/{name}"): Described(media=(FILE,), errors=(404,)),
    ("post", "/v2/translate"): Described((m.DeepLTranslateRequest,), (JSON, FORM), errors=_RUNS + (404,)),
    ("post", "/v2/languages"): Described((m.DeepLLanguagesRequest,), (JSON, FORM)),
    ("post", "/v2/glossaries"): Described((m.DeepLGlossaryRequest,), (JSON, FORM), success=201, errors=(456,)),
    ("get", "/v2/glossaries/{glossary_id}"): Described(errors=(400,)),  # a glossary of several dictionaries
    ("get", "/v2/glossaries/{glossary_id}/entries"): Described(media=("text/tab-separated-values",), errors=(400,)),
    ("delete", "/v2/glossaries/{glossary_id}"): Described(success=204),
    ("post", "/v3/glossaries"): Described((m.DeepLV3GlossaryRequest,), success=201, errors=(456,)),
    ("patch", "/v3/glossaries/{glossary_id}"): Described((m.DeepLV3GlossaryPatch,), errors=(404, 456)),
    ("delete", "/v3/glossaries/{glossary_id}"): Described(success=204),
    ("get", "/v3/glossaries/{glossary_id}/entries"): Described(query=m.DeepLLanguagePair, errors=(400,)),
    ("put", "/v3/glossaries/{glossary_id}/dictionaries"): Described((m.DeepLDictionary,), (JSON, FORM),
                                                                    errors=(404, 456)),
    ("delete", "/v3/glossaries/{glossary_id}/dictionaries"): Described(query=m.DeepLLanguagePair, success=204,
                                                                       errors=(400,)),
    ("post", "/v2/document"): Described((m.DeepLDocumentUpload,), (MULTIPART,), errors=(404, 503)),
    ("post", "/v2/document/{document_id}"): Described((m.DeepLDocumentKey,), (JSON, FORM), errors=(404,)),
    ("post", "/v2/document/{document_id}/result"): Described((m.DeepLDocumentKey,), (JSON, FORM), media=(FILE,),
                                                             errors=(404, 503)),
    ("post", "/deeplx/translate"): Described((m.DeepLXRequest,), errors=_RUNS),
    ("post", "/v1/translate"): Described((m.DeepLXRequest,), errors=_RUNS),
    ("post", "/imme"): Described((m.ImmersiveRequest,), errors=_RUNS),
}
# What /docs "Try it out" fills in: a small valid body per model (a sample built from the
# schema alone would try every optional field, an unknown template or style among them).
# Uploads leave out the file, which the user picks.
EXAMPLES: dict[type[BaseModel], dict[str, Any]] = {
    m.NativeTranslateRequest: {"text": "Hello world.", "src": "en", "tgt": "de"},
    m.NativeDetectRequest: {"text": "Dies ist ein deutscher Satz."},
    m.NativeDocumentUpload: {"tgt": "de", "src": "auto"},
    m.ChatCompletionRequest: {"model": "hymt", "messages": [
        {"role": "user", "content": "Translate the following text into German:\n\nGood morning."}]},
    m.CompletionRequest: {"model": "hymt", "prompt": "Good morning", "max_tokens": 16},
    m.LibreTranslateRequest: {"q": "Hello world.", "source": "auto", "target": "es"},
    m.LibreDetectRequest: {"q": "Bonjour tout le monde."},
    m.LibreTranslateFileUpload: {"source": "auto", "target": "es"},
    m.DeepLTranslateRequest: {"text": ["Hello world."], "target_lang": "DE"},
    m.DeepLGlossaryRequest: {"name": "demo", "source_lang": "EN", "target_lang": "DE", "entries": "Hello\tHallo",
                             "entries_format": "tsv"},
    m.DeepLV3GlossaryRequest: {"name": "demo", "dictionaries": [
        {"source_lang": "EN", "target_lang": "DE", "entries": "Hello\tHallo", "entries_format": "tsv"}]},
    m.DeepLV3GlossaryPatch: {"name": "renamed", "dictionaries": [
        {"source_lang": "EN", "target_lang": "DE", "entries": "Goodbye\tTschüss", "entries_format": "tsv"}]},
    m.DeepLDictionary: {"source_lang": "EN", "target_lang": "FR", "entries": "Hello\tBonjour",
                        "entries_format": "tsv"},
    m.DeepLLanguagesRequest: {"type": "target"},
    m.DeepLDocumentUpload: {"target_lang": "DE"},
    m.DeepLDocumentKey: {"document_key": "0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF"},
    m.DeepLXRequest: {"text": "Hello world.", "source_lang": "EN", "target_lang": "DE"},
    m.ImmersiveRequest: {"text_list": ["Hello world.", "Good night."], "source_lang": "auto", "target_lang": "zh-CN"},
}
# hymt's statuses (wire_status maps them per protocol).
_INPUT = (400, 401, 403, 408, 413, 415, 422)  # any route that reads a body
_DESCRIPTIONS = {
    400: "invalid input (the message names the field and the valid values)",
    401: "missing or wrong API key",
    403: "wrong API key, or a web page origin that may not use this server",
    404: "no such glossary, dictionary, document or file (or it expired, was deleted or downloaded)",
    408: "the body did not arrive within --body-timeout",
    409: "the job has no result: it is queued, translating or failed",
    413: "over --max-body-bytes, --max-chars, --max-batch, --max-queue, --max-file-mb, --max-segments or the "
         "glossary limits",
    415: "a body type no protocol reads",
    422: "a field of the wrong type",
    429: "the queue is full (--max-queue): retry after Retry-After",
    456: "the glossary store is full (its limits on glossaries and entries)",
    500: "engine fault, or a document that could not be translated (the server log has the details under the "
         "error id)",
    503: "the model is loading, the engine is restarting, the server is shutting down, or the document is not "
         "translated yet: retry after Retry-After",
    504: "over --request-timeout",
}
# Routes without a key; methods with a body.
_OPEN = {"/health", "/ready", "/api/status", "/api/languages", "/api/documents/formats", "/languages",
         "/frontend/settings", "/download_file/{name}"}
_BODY_METHODS = {"post", "put", "patch"}
_SUCCESS = {200: "success", 201: "created", 204: "done: no content"}
_MEDIA_SCHEMAS = {JSON: {"type": "object"}, FILE: {"type": "string", "format": "binary"}}


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
    models = {model for described in OPERATIONS.values() for model in described.bodies}
    ordered = sorted(models, key=lambda model: model.__name__) + list(m.ERROR_MODELS.values())
    _, top = models_json_schema([(model, "validation") for model in ordered], ref_template=_REF)
    return dict(top.get("$defs", {}))


def _complete(operation: dict[str, Any], method: str, path: str) -> None:
    operation["operationId"] = operation_id(method, path)
    if path == "/ready":
        operation["responses"]["503"] = {"description": "not ready: loading, restarting, failed or draining",
                                         "content": {JSON: {"schema": {"type": "object"}}}}
        return
    operation["responses"].pop("422", None)  # FastAPI's own; ours is in the protocol's shape
    key = (method, re.sub(r"^/(libretranslate|deepl)(?=/)", "", path))
    described = OPERATIONS.get(key, Described())
    if described.bodies:
        operation["requestBody"] = _request_body(described)
    if described.query is not None:
        operation["parameters"] = [*operation.get("parameters", []), *_query_parameters(described.query)]
    _success(operation["responses"], described)
    operation["responses"].update(_errors(protocol_of_path(path), _statuses(method, key[1], described)))


def _request_body(described: Described) -> dict[str, Any]:
    refs = [{"$ref": _REF.format(model=model.__name__)} for model in described.bodies]
    schema = refs[0] if len(refs) == 1 else {"anyOf": refs}
    example = EXAMPLES[described.bodies[0]]
    return {"required": True, "content": {enc: {"schema": schema, "example": example} for enc in described.encodings}}


def _query_parameters(model: type[BaseModel]) -> list[dict[str, Any]]:
    schema = model.model_json_schema(mode="validation")
    required = set(schema.get("required", ()))
    return [{"name": name, "in": "query", "required": name in required, "schema": prop,
             **({"example": prop["examples"][0]} if prop.get("examples") else {})}
            for name, prop in schema["properties"].items()]


def _success(responses: dict[str, Any], described: Described) -> None:
    """FastAPI's 200 replaced by the status and media types the handler answers."""
    fastapi = responses.pop("200", {}).get("content", {})
    answer: dict[str, Any] = {"description": _SUCCESS[described.success]}
    if described.success != 204:
        answer["content"] = {media: fastapi.get(media) or {"schema": _MEDIA_SCHEMAS.get(media, {"type": "string"})}
                             for media in described.media}
    responses[str(described.success)] = answer


def _statuses(method: str, path: str, described: Described) -> tuple[int, ...]:
    """hymt's error statuses of an operation: those of its kind of route, then its own."""
    if path in _OPEN:
        common: tuple[int, ...] = ()
    elif described.bodies or method in _BODY_METHODS:  # the key check reads a body's api_key
        common = _INPUT
    else:
        common = (401,) + ((403,) if method == "delete" else ()) + ((404,) if "{" in path else ())
    return tuple(sorted(set(common + described.errors)))


def _errors(protocol: str, statuses: tuple[int, ...]) -> dict[str, Any]:
    ref = {"$ref": _REF.format(model=m.ERROR_MODELS[protocol].__name__)}
    out: dict[str, Any] = {}
    for status in statuses:
        code = str(wire_status(protocol, status))
        answer = out.setdefault(code, {"description": "", "content": {JSON: {"schema": ref}}})
        text = _DESCRIPTIONS[status]
        answer["description"] = f"{answer['description']}; {text}" if answer["description"] else text
    return out


def operation_id(method: str, path: str) -> str:
    """`post_api_translate_stream`, `get_v2_glossaries_glossary_id`: unique per method and path."""
    return f"{method}_{re.sub(r'[^0-9A-Za-z]+', '_', path).strip('_') or 'root'}"
