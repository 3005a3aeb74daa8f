"""Root POST /translate: three protocols claim it; the body's keys decide (docs/reference/protocols.md §6).

`q` -> LibreTranslate (also the default: its bindings assume root paths); `text_list` ->
Immersive Translate; a string `text` with `source_lang` / `target_lang` -> DeepLX.
"""
from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from hymt.server.auth import require_key
from hymt.server.body import read_body
from hymt.server.errors import set_protocol
from hymt.server.protocols import deeplx_api, immersive_api, libretranslate_api


def sniff(body: dict[str, Any]) -> str:
    """The protocol a root /translate body speaks."""
    if "q" in body:
        return "libretranslate"
    if "text_list" in body:
        return "immersive"
    if isinstance(body.get("text"), str) and ("source_lang" in body or "target_lang" in body):
        return "deeplx"
    return "libretranslate"


async def _pin_protocol(request: Request) -> None:
    """Runs before auth, so even a missing key is answered in the sniffed protocol's shape."""
    set_protocol(request, sniff(await read_body(request)))


router = APIRouter()


@router.post("/translate", response_model=None, dependencies=[Depends(_pin_protocol), Depends(require_key)])
async def translate(request: Request) -> Response | dict[str, Any] | list[Any]:
    protocol = sniff(await read_body(request))
    if protocol == "immersive":
        return await immersive_api.translate(request)
    if protocol == "deeplx":
        return await deeplx_api.translate(request)
    return await libretranslate_api.translate(request)
