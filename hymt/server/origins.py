"""Which web origins may call the server from a browser (`--cors-origins`).

A pattern is one of:

- an exact origin: `https://app.example`, `http://192.168.1.5:8000`;
- any port of one host: `http://localhost:*`;
- any host of one scheme: `chrome-extension://*` (every extension of that browser);
- `*`: every origin.

`null` (sandboxed frames, `file://` pages, some redirects) is never allowed, whatever the
patterns say: it is the origin of content anyone can make. The defaults admit the pages of
this machine (loopback hosts, any port) and browser extensions, the clients a local
translation server has; any other website must be named.
"""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit

from hymt.errors import InvalidInputError

ANY = "*"
#: Loopback pages on any port, and every browser extension.
DEFAULT_CORS_ORIGINS: tuple[str, ...] = (
    "http://localhost:*", "https://localhost:*", "http://127.0.0.1:*", "https://127.0.0.1:*",
    "http://[::1]:*", "https://[::1]:*",
    "chrome-extension://*", "moz-extension://*", "safari-web-extension://*",
)
_DEFAULT_PORTS = {"http": 80, "https": 443}
LOOPBACK_NAMES = frozenset({"localhost"})


@dataclass(frozen=True)
class Origin:
    """A parsed `scheme://host[:port]` (host lower-case, IPv6 without brackets)."""

    scheme: str
    host: str
    port: int | None

    @classmethod
    def parse(cls, text: str) -> Origin | None:
        """The origin `text` names, or None when it is not one (`null`, a path, garbage)."""
        try:
            parts = urlsplit(text.strip())
            port = parts.port
        except ValueError:
            return None
        if not parts.scheme or not parts.hostname or parts.path not in ("", "/") or parts.query or parts.username:
            return None
        return cls(parts.scheme.lower(), parts.hostname.lower(), port or _DEFAULT_PORTS.get(parts.scheme.lower()))


def is_loopback_host(host: str) -> bool:
    """True for `localhost`, 127.0.0.0/8 and ::1 (brackets allowed)."""
    host = host.strip("[]").lower()
    if host in LOOPBACK_NAMES or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class _Pattern:
    scheme: str
    host: str  # ANY: every host of the scheme
    port: int | str | None  # ANY: every port; None: the scheme's default

    def matches(self, origin: Origin) -> bool:
        if origin.scheme != self.scheme:
            return False
        if self.host == ANY:
            return True
        if origin.host != self.host:
            return False
        return self.port == ANY or origin.port == self.port


def _parse_pattern(text: str) -> _Pattern:
    scheme, sep, rest = text.strip().partition("://")
    if not sep or not scheme or not rest or "/" in rest.rstrip("/"):
        raise InvalidInputError(f"--cors-origins: {text!r} is not an origin (scheme://host[:port], "
                                "scheme://host:*, scheme://* or *)", field="cors_origins")
    rest = rest.rstrip("/")
    if rest == ANY:
        return _Pattern(scheme.lower(), ANY, ANY)
    if rest.endswith(":*"):
        host = rest[:-2].strip("[]").lower()
        return _Pattern(scheme.lower(), host, ANY)
    origin = Origin.parse(f"{scheme}://{rest}")
    if origin is None:
        raise InvalidInputError(f"--cors-origins: {text!r} is not an origin", field="cors_origins")
    return _Pattern(origin.scheme, origin.host, origin.port)


class OriginPolicy:
    """The allowed browser origins; `allows(origin_header)` decides one request."""

    def __init__(self, patterns: tuple[str, ...]):
        self.any = ANY in patterns
        self._patterns = tuple(_parse_pattern(p) for p in patterns if p != ANY)

    def allows(self, origin_header: str) -> bool:
        if origin_header.strip().lower() == "null":
            return False
        origin = Origin.parse(origin_header)
        if origin is None:
            return False
        return self.any or any(p.matches(origin) for p in self._patterns)


def check_patterns(patterns: tuple[str, ...]) -> None:
    """Raise InvalidInputError naming the first pattern that is not an origin."""
    OriginPolicy(patterns)
