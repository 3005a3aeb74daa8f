"""hymt's server: one FastAPI app, one model, the web UI and every protocol.

    from hymt.server import ServerSettings, create_app
    app = create_app(ServerSettings(model="./HY-MT1.5-1.8B"))   # uvicorn.run(app, ...)

`hymt serve` (hymt/cli/serve_cmd.py) builds the settings from the command line. The names
load lazily, so the CLI reads the settings' constants without importing FastAPI.
"""
from __future__ import annotations

import importlib

_LAZY = {"create_app": "hymt.server.app", "ServerSettings": "hymt.server.settings"}

__all__ = list(_LAZY)


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'hymt.server' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
