"""DeepL v2 glossaries over the shared glossary store (hymt/server/glossary_store.py), and what
the v2 and v3 routes and /v2/translate share.

    POST   /v2/glossaries {name, source_lang, target_lang, entries, entries_format: tsv|csv} -> 201
    GET    /v2/glossaries                  the glossaries with one dictionary (a v2 glossary)
    GET    /v2/glossaries/{id}             400 for a glossary with several dictionaries (use v3)
    GET    /v2/glossaries/{id}/entries     TSV
    DELETE /v2/glossaries/{id}             any glossary, v3 ones included -> 204
    GET    /v2/glossary-language-pairs     every pair of two languages, lower-case codes

Glossaries are the server's, not a key's: every API key sees every glossary. A translation
with `glossary_id` / `glossary_ids` sends the dictionaries' entries through the model
family's official terminology template (only those a sentence contains).
"""
from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from hymt.errors import InvalidInputError, UnknownLanguageError
from hymt.languages import LANGUAGES, Language, get_language
from hymt.server.body import read_body
from hymt.server.errors import ApiError
from hymt.server.glossary_entries import entries_tsv, parse_entries
from hymt.server.glossary_store import (
    Dictionary,
    DictionaryNotFoundError,
    GlossaryInfo,
    GlossaryLimitError,
    GlossaryNotFoundError,
    GlossaryStore,
)
from hymt.server.language_codes import deepl_glossary_code, deepl_glossary_lookups, deepl_glossary_pairs
from hymt.server.protocols.deepl_request import not_specified
from hymt.server.state import state_of
from hymt.translate.glossary import Glossary

T = TypeVar("T")
_STORE = "glossary_store"
#: DeepL's answer to a glossary language it has no glossaries for.
UNSUPPORTED_PAIR = "Unsupported glossary source and target language pair"
#: HTTP status of a write over a limit: the request is too large, or the server holds too much.
_LIMIT_STATUS = {"glossary": 413, "store": 456}


def glossary_store(request: Request) -> GlossaryStore:
    """The app's store, opened on first use (settings.glossaries)."""
    st = state_of(request)
    store = st.extras.get(_STORE)
    if store is None:
        try:
            store = st.extras[_STORE] = GlossaryStore(st.settings.glossaries)
        except InvalidInputError as exc:  # the file cannot be opened: the server's fault, not the client's
            raise ApiError(500, str(exc), type="internal_error") from None
    return store


async def run_store(request: Request, work: Callable[[GlossaryStore], T]) -> T:
    """`work(store)` off the event loop (entries can be megabytes), its errors as DeepL's."""
    store = glossary_store(request)
    try:
        return await asyncio.to_thread(work, store)
    except (GlossaryNotFoundError, DictionaryNotFoundError) as exc:
        raise ApiError(404, str(exc), type="not_found", field=exc.field) from None
    except GlossaryLimitError as exc:
        raise ApiError(_LIMIT_STATUS[exc.scope], str(exc), type="too_large", field=exc.field) from None
    except InvalidInputError as exc:
        raise ApiError(400, str(exc), field=exc.field) from None


def glossary_language(code: object, field: str) -> str:
    """A glossary language code -> the stored code (lower case); 400 in DeepL's words."""
    if code is None or code == "":
        raise not_specified(field)
    if not isinstance(code, str):
        raise ApiError(422, f"{field} must be a string", type="invalid_type", field=field)
    try:
        return deepl_glossary_code(get_language(code, field=field))
    except UnknownLanguageError:
        valid = ", ".join(deepl_glossary_code(lang) for lang in LANGUAGES)
        raise ApiError(400, f"{UNSUPPORTED_PAIR}: {field} {code!r} is not a language this server translates; "
                            f"valid: {valid}", field=field) from None


def read_dictionary(fields: Mapping[str, Any], store: GlossaryStore) -> Dictionary:
    """A dictionary from `{source_lang, target_lang, entries, entries_format}`."""
    source = glossary_language(fields.get("source_lang"), "source_lang")
    target = glossary_language(fields.get("target_lang"), "target_lang")
    if source == target:
        raise ApiError(400, f"{UNSUPPORTED_PAIR}: source_lang and target_lang are both {source!r}",
                       field="target_lang")
    entries = fields.get("entries")
    if not isinstance(entries, str) or not entries.strip():
        raise not_specified("entries")
    entries_format = fields.get("entries_format") or "tsv"
    if not isinstance(entries_format, str):
        raise ApiError(422, "entries_format must be a string", type="invalid_type", field="entries_format")
    pairs = parse_entries(entries, entries_format.strip().lower(), source_lang=source, target_lang=target,
                          max_term_bytes=store.limits.max_term_bytes)
    return Dictionary(source, target, pairs)


def glossary_name(fields: Mapping[str, Any]) -> str:
    name = fields.get("name")
    if not isinstance(name, str) or not name.strip():
        raise not_specified("name")
    return name


async def translation_glossary(request: Request, glossary_ids: tuple[str, ...], source: Language,
                               target: Language) -> Glossary:
    """The entries of `glossary_ids` for a translation from `source` into `target`: each
    glossary's dictionary of that pair (or of the variant's base language); a source term
    that several glossaries hold keeps the first one's target."""
    def lookup(store: GlossaryStore) -> Glossary:
        merged: dict[str, str] = {}
        for glossary_id in glossary_ids:
            for term, translation in _dictionary_for(store, glossary_id, source, target):
                merged.setdefault(term, translation)
        return tuple(merged.items())

    return await run_store(request, lookup)


def _dictionary_for(store: GlossaryStore, glossary_id: str, source: Language, target: Language) -> Glossary:
    missing: DictionaryNotFoundError | None = None
    for source_code, target_code in deepl_glossary_lookups(source, target):
        try:
            return store.entries(glossary_id, source_code, target_code)
        except DictionaryNotFoundError as exc:
            missing = missing or exc
    assert missing is not None  # deepl_glossary_lookups names at least the exact pair
    pair = f"{deepl_glossary_code(source)}-{deepl_glossary_code(target)}"
    if len(missing.glossary.dictionaries) == 1:
        only = missing.glossary.dictionaries[0]
        raise ApiError(400, f"Language pair of the glossary doesn't match the language pair of the request: "
                            f"glossary {glossary_id!r} is {only.source_lang}-{only.target_lang}, the request {pair}",
                       field="glossary_id")
    raise ApiError(400, str(missing), field="glossary_id")


# -- v2 routes -------------------------------------------------------------------------------
def v2_info(info: GlossaryInfo) -> dict[str, Any]:
    """A glossary in v2's shape (it has exactly one dictionary)."""
    dictionary = info.dictionaries[0]
    return {"glossary_id": info.glossary_id, "name": info.name, "ready": True,
            "source_lang": dictionary.source_lang, "target_lang": dictionary.target_lang,
            "creation_time": info.creation_time, "entry_count": dictionary.entry_count}


def _single(info: GlossaryInfo) -> GlossaryInfo:
    if len(info.dictionaries) != 1:
        raise ApiError(400, f"glossary {info.glossary_id!r} has {len(info.dictionaries)} dictionaries, and a v2 "
                            f"glossary has one; read it with GET /v3/glossaries/{info.glossary_id}",
                       field="glossary_id")
    return info


async def create(request: Request) -> Response:
    body = await read_body(request)
    name = glossary_name(body)

    def work(store: GlossaryStore) -> GlossaryInfo:
        return store.create(name, [read_dictionary(body, store)])

    info = await run_store(request, work)
    return JSONResponse(v2_info(info), status_code=201)


async def list_all(request: Request) -> dict[str, Any]:
    infos = await run_store(request, lambda store: store.list())
    return {"glossaries": [v2_info(info) for info in infos if len(info.dictionaries) == 1]}


async def get_one(request: Request, glossary_id: str) -> dict[str, Any]:
    info = await run_store(request, lambda store: store.get(glossary_id))
    return v2_info(_single(info))


async def get_entries(request: Request, glossary_id: str) -> Response:
    def work(store: GlossaryStore) -> Glossary:
        dictionary = _single(store.get(glossary_id)).dictionaries[0]
        return store.entries(glossary_id, dictionary.source_lang, dictionary.target_lang)

    entries = await run_store(request, work)
    return PlainTextResponse(entries_tsv(entries), media_type="text/tab-separated-values")


async def delete(request: Request, glossary_id: str) -> Response:
    await run_store(request, lambda store: store.delete(glossary_id))
    return Response(status_code=204)


async def language_pairs() -> dict[str, Any]:
    return {"supported_languages": deepl_glossary_pairs()}


def add_routes(router: APIRouter) -> None:
    router.add_api_route("/v2/glossaries", create, methods=["POST"])
    router.add_api_route("/v2/glossaries", list_all, methods=["GET"])
    router.add_api_route("/v2/glossaries/{glossary_id}", get_one, methods=["GET"])
    router.add_api_route("/v2/glossaries/{glossary_id}", delete, methods=["DELETE"])
    router.add_api_route("/v2/glossaries/{glossary_id}/entries", get_entries, methods=["GET"])
    router.add_api_route("/v2/glossary-language-pairs", language_pairs, methods=["GET"])
