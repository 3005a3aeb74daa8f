"""hymt's server: one FastAPI app, one model, the web UI and every protocol.

    from hymt.server import ServerSettings, create_app
    app = create_app(ServerSettings(model="./HY-MT1.5-1.8B"))   # uvicorn.run(app, ...)

`hymt serve` (hymt/cli/serve_cmd.py) builds the settings from the command line.
"""
from hymt.server.app import create_app
from hymt.server.settings import ServerSettings

__all__ = ["ServerSettings", "create_app"]
