"""API keys: one key set, accepted in every style clients use (docs/reference/protocols.md §7).

`Authorization: Bearer K` (OpenAI, most peers), `Authorization: DeepL-Auth-Key K`,
`X-API-Key: K`, `?token=K` / `?api_key=K` (Immersive, MTranServer), and the body field
`api_key` (LibreTranslate, JSON or form). Keys are compared with `hmac.compare_digest`
against every configured key, so timing reveals neither the key nor which one matched.
With no keys configured (the localhost default) everything is open.

With keys, what the server tells about itself follows one policy: `/health` and the status
code of `/ready` are open (load balancers and probes carry no key); the details of `/ready`
and `/api/status` (model, engine, errors, queue, engine process) need a key, and without one
these answer only their status; `/metrics` needs a key.
"""
from __future__ import annotations

import hmac

from fastapi import Request

from hymt.server.body import read_body
from hymt.server.errors import ApiError

_SCHEMES = ("bearer", "deepl-auth-key")


def key_from_headers(request: Request) -> str | None:
    """The key a request carries in its headers or query string, if any."""
    header = request.headers.get("authorization")
    if header:
        scheme, _, value = header.strip().partition(" ")
        if scheme.lower() in _SCHEMES and value.strip():
            return value.strip()
        if not value and scheme:  # a bare key in Authorization
            return scheme
    for name in ("x-api-key", "api-key"):
        if request.headers.get(name):
            return request.headers[name].strip()
    for name in ("token", "api_key", "key"):
        if request.query_params.get(name):
            return request.query_params[name]
    return None


def key_matches(candidate: str, keys: tuple[str, ...]) -> bool:
    """True when `candidate` equals one of `keys`; every key is compared (constant time)."""
    given = candidate.encode()
    matched = False
    for key in keys:
        matched |= hmac.compare_digest(given, key.encode())
    return matched


def has_key(request: Request) -> bool:
    """True when no keys are configured or the request's headers or query carry a valid one."""
    keys: tuple[str, ...] = request.app.state.settings.api_keys
    if not keys:
        return True
    candidate = key_from_headers(request)
    return candidate is not None and key_matches(candidate, keys)


async def require_key(request: Request) -> None:
    """FastAPI dependency of every protected route: 401 for a missing or wrong key (the DeepL and
    LibreTranslate error renderers answer a wrong key 403, as those services do)."""
    keys: tuple[str, ...] = request.app.state.settings.api_keys
    if not keys:
        return
    candidate = key_from_headers(request)
    if candidate is None and request.method in ("POST", "PUT", "PATCH"):
        body_key = (await read_body(request)).get("api_key")
        candidate = body_key if isinstance(body_key, str) and body_key else None
    if candidate is None:
        raise ApiError(
            401,
            "an API key is required: send `Authorization: Bearer <key>`, `Authorization: DeepL-Auth-Key <key>`, "
            "`X-API-Key: <key>`, `?token=<key>` or the body field `api_key`",
            type="missing_key",
            headers={"WWW-Authenticate": "Bearer"},
        )
    if not key_matches(candidate, keys):
        raise ApiError(401, "invalid API key", type="invalid_key", headers={"WWW-Authenticate": "Bearer"})
