"""DeepL v3 (multilingual, editable) glossaries over the shared store (docs/reference/protocols.md §2.3).

    POST   /v3/glossaries {name, dictionaries: [{source_lang, target_lang, entries,
           entries_format}]}                                  -> 201 glossary
    GET    /v3/glossaries                                     -> {glossaries: [glossary]}
    GET    /v3/glossaries/{id}                                -> glossary
    PATCH  /v3/glossaries/{id} {name?, dictionaries?}         -> glossary; entries are merged
           into the dictionary of their pair (created if absent)
    DELETE /v3/glossaries/{id}                                -> 204
    GET    /v3/glossaries/{id}/entries?source_lang&target_lang
           -> {dictionaries: [{source_lang, target_lang, entries (TSV), entries_format: "tsv"}]}
    PUT    /v3/glossaries/{id}/dictionaries {source_lang, target_lang, entries, entries_format}
           -> {source_lang, target_lang, entry_count}; the dictionary's entries replaced
    DELETE /v3/glossaries/{id}/dictionaries?source_lang&target_lang -> 204

A glossary is `{glossary_id, name, dictionaries: [{source_lang, target_lang, entry_count}],
creation_time}`. Glossaries made through v2 are v3 glossaries with one dictionary, so clients
that list and clean up through v3 see them all.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from hymt.server.body import read_body
from hymt.server.errors import ApiError
from hymt.server.glossary_entries import entries_tsv
from hymt.server.glossary_store import DictionaryInfo, GlossaryInfo, GlossaryStore
from hymt.server.protocols.deepl_glossaries import glossary_language, glossary_name, read_dictionary, run_store


def _dictionary(info: DictionaryInfo) -> dict[str, Any]:
    return {"source_lang": info.source_lang, "target_lang": info.target_lang, "entry_count": info.entry_count}


def v3_info(info: GlossaryInfo) -> dict[str, Any]:
    return {"glossary_id": info.glossary_id, "name": info.name,
            "dictionaries": [_dictionary(d) for d in info.dictionaries], "creation_time": info.creation_time}


def _dictionaries(body: Mapping[str, Any], *, required: bool) -> list[Mapping[str, Any]]:
    value = body.get("dictionaries")
    if value is None and not required:
        return []
    if not isinstance(value, list) or not all(isinstance(item, Mapping) for item in value):
        raise ApiError(422, "dictionaries must be a list of objects {source_lang, target_lang, entries, "
                            "entries_format}", type="invalid_type", field="dictionaries")
    if required and not value:
        raise ApiError(400, "Glossary dictionaries must be provided: dictionaries is empty", field="dictionaries")
    return value


def _pair(request: Request) -> tuple[str, str]:
    query = request.query_params
    return (glossary_language(query.get("source_lang"), "source_lang"),
            glossary_language(query.get("target_lang"), "target_lang"))


async def create(request: Request) -> Response:
    body = await read_body(request)
    name = glossary_name(body)
    fields = _dictionaries(body, required=True)

    def work(store: GlossaryStore) -> GlossaryInfo:
        return store.create(name, [read_dictionary(item, store) for item in fields])

    return JSONResponse(v3_info(await run_store(request, work)), status_code=201)


async def list_all(request: Request) -> dict[str, Any]:
    return {"glossaries": [v3_info(info) for info in await run_store(request, lambda store: store.list())]}


async def get_one(request: Request, glossary_id: str) -> dict[str, Any]:
    return v3_info(await run_store(request, lambda store: store.get(glossary_id)))


async def patch(request: Request, glossary_id: str) -> dict[str, Any]:
    body = await read_body(request)
    name = glossary_name(body) if body.get("name") is not None else None
    fields = _dictionaries(body, required=False)
    if name is None and not fields:
        raise ApiError(400, "Parameter 'name' or 'dictionaries' not specified.", type="missing_field", field="name")

    def work(store: GlossaryStore) -> GlossaryInfo:
        return store.update(glossary_id, name, [read_dictionary(item, store) for item in fields])

    return v3_info(await run_store(request, work))


async def delete(request: Request, glossary_id: str) -> Response:
    await run_store(request, lambda store: store.delete(glossary_id))
    return Response(status_code=204)


async def get_entries(request: Request, glossary_id: str) -> dict[str, Any]:
    source, target = _pair(request)
    entries = await run_store(request, lambda store: store.entries(glossary_id, source, target))
    return {"dictionaries": [{"source_lang": source, "target_lang": target, "entries": entries_tsv(entries),
                              "entries_format": "tsv"}]}


async def replace_dictionary(request: Request, glossary_id: str) -> dict[str, Any]:
    body = await read_body(request)

    def work(store: GlossaryStore) -> DictionaryInfo:
        return store.replace_dictionary(glossary_id, read_dictionary(body, store))

    return _dictionary(await run_store(request, work))


async def delete_dictionary(request: Request, glossary_id: str) -> Response:
    source, target = _pair(request)
    await run_store(request, lambda store: store.delete_dictionary(glossary_id, source, target))
    return Response(status_code=204)


def add_routes(router: APIRouter) -> None:
    router.add_api_route("/v3/glossaries", create, methods=["POST"])
    router.add_api_route("/v3/glossaries", list_all, methods=["GET"])
    router.add_api_route("/v3/glossaries/{glossary_id}", get_one, methods=["GET"])
    router.add_api_route("/v3/glossaries/{glossary_id}", patch, methods=["PATCH"])
    router.add_api_route("/v3/glossaries/{glossary_id}", delete, methods=["DELETE"])
    router.add_api_route("/v3/glossaries/{glossary_id}/entries", get_entries, methods=["GET"])
    router.add_api_route("/v3/glossaries/{glossary_id}/dictionaries", replace_dictionary, methods=["PUT"])
    router.add_api_route("/v3/glossaries/{glossary_id}/dictionaries", delete_dictionary, methods=["DELETE"])
