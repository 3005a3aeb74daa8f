"""DeepL v2 glossaries, kept in memory (lost on restart; immutable, one language pair each).

    POST   /v2/glossaries {name, source_lang, target_lang, entries, entries_format: tsv|csv}
    GET    /v2/glossaries, /v2/glossaries/{id}, /v2/glossaries/{id}/entries (TSV)
    DELETE /v2/glossaries/{id}
    GET    /v2/glossary-language-pairs

A translation with `glossary_id` sends the entries through the model family's official
terminology template.
"""
from __future__ import annotations

import csv
import io
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import PlainTextResponse, Response

from hymt.languages import LANGUAGES
from hymt.server.body import get_str, read_body
from hymt.server.errors import ApiError
from hymt.server.request_fields import language
from hymt.server.state import state_of

MAX_GLOSSARIES = 1000
MAX_ENTRIES = 10000


@dataclass(frozen=True)
class Glossary:
    glossary_id: str
    name: str
    source_lang: str
    target_lang: str
    entries: tuple[tuple[str, str], ...]
    creation_time: str

    def info(self) -> dict[str, Any]:
        return {"glossary_id": self.glossary_id, "name": self.name, "ready": True,
                "source_lang": self.source_lang, "target_lang": self.target_lang,
                "creation_time": self.creation_time, "entry_count": len(self.entries)}


def _store(request: Request) -> dict[str, Glossary]:
    return state_of(request).extras.setdefault("deepl_glossaries", {})


def entries_of(request: Request, glossary_id: str) -> tuple[tuple[str, str], ...]:
    """The entries of a stored glossary, or 404."""
    glossary = _store(request).get(glossary_id)
    if glossary is None:
        raise ApiError(404, f"glossary {glossary_id!r} not found", type="not_found", field="glossary_id")
    return glossary.entries


def parse_entries(text: str, entries_format: str) -> tuple[tuple[str, str], ...]:
    """TSV or CSV `source,target` lines -> pairs (blank lines skipped); 400 on a bad line."""
    if entries_format not in ("tsv", "csv"):
        raise ApiError(400, "entries_format must be tsv or csv", field="entries_format", valid=["tsv", "csv"])
    rows = csv.reader(io.StringIO(text), delimiter="\t" if entries_format == "tsv" else ",")
    pairs: list[tuple[str, str]] = []
    for number, row in enumerate(rows, 1):
        if not row or not any(cell.strip() for cell in row):
            continue
        if len(row) < 2 or not row[0].strip() or not row[1].strip():
            raise ApiError(400, f"entries line {number}: expected `source{'<TAB>' if entries_format == 'tsv' else ','}"
                           "target`", field="entries")
        pairs.append((row[0].strip(), row[1].strip()))
    if not pairs:
        raise ApiError(400, "entries must contain at least one entry", field="entries")
    if len(pairs) > MAX_ENTRIES:
        raise ApiError(413, f"entries has {len(pairs)} entries; the limit is {MAX_ENTRIES}", field="entries")
    return tuple(pairs)


async def create(request: Request) -> dict[str, Any]:
    body = await read_body(request)
    store = _store(request)
    if len(store) >= MAX_GLOSSARIES:
        raise ApiError(413, f"the server holds {MAX_GLOSSARIES} glossaries already; delete some", field="glossaries")
    name = get_str(body, "name", required=True)
    source = get_str(body, "source_lang", required=True)
    target = get_str(body, "target_lang", required=True)
    language(source, "source_lang")
    language(target, "target_lang")
    entries = parse_entries(get_str(body, "entries", required=True),
                            (get_str(body, "entries_format", "tsv") or "tsv").lower())
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    glossary = Glossary(str(uuid.uuid4()), name, source.upper(), target.upper(), entries, now)
    store[glossary.glossary_id] = glossary
    return glossary.info()


async def list_all(request: Request) -> dict[str, Any]:
    return {"glossaries": [g.info() for g in _store(request).values()]}


async def get_one(request: Request, glossary_id: str) -> dict[str, Any]:
    entries_of(request, glossary_id)
    return _store(request)[glossary_id].info()


async def get_entries(request: Request, glossary_id: str) -> Response:
    entries = entries_of(request, glossary_id)
    return PlainTextResponse("\n".join(f"{s}\t{t}" for s, t in entries), media_type="text/tab-separated-values")


async def delete(request: Request, glossary_id: str) -> Response:
    entries_of(request, glossary_id)
    del _store(request)[glossary_id]
    return Response(status_code=204)


async def language_pairs() -> dict[str, Any]:
    codes = [lang.code.upper() for lang in LANGUAGES]
    return {"supported_languages": [{"source_lang": s, "target_lang": t} for s in codes for t in codes if s != t]}


def add_routes(router: APIRouter) -> None:
    router.add_api_route("/glossaries", create, methods=["POST"])
    router.add_api_route("/glossaries", list_all, methods=["GET"])
    router.add_api_route("/glossaries/{glossary_id}", get_one, methods=["GET"])
    router.add_api_route("/glossaries/{glossary_id}", delete, methods=["DELETE"])
    router.add_api_route("/glossaries/{glossary_id}/entries", get_entries, methods=["GET"])
    router.add_api_route("/glossary-language-pairs", language_pairs, methods=["GET"])
