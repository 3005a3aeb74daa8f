"""`hymt serve`: the web UI and every API on one port, one model loaded once.

    hymt serve                                   # 127.0.0.1:8000, tencent/HY-MT1.5-1.8B
    hymt serve --model ./HY-MT1.5-7B --port 9000 --api-key secret --max-queue 64

The socket opens at once (`/health` answers); the model loads in the background and
`/ready` turns 200 when it is warm. If the model cannot be loaded, the reason is printed
and the server exits with status 1 (--keep-serving-on-load-error keeps the web UI up to
show it instead). Logs go to stderr, all in one format: text on a terminal, JSON lines
otherwise (--log-format; also env HYMT_LOG_FORMAT).
"""
from __future__ import annotations

import argparse
import logging
import os
import sys
import threading
import time
from typing import TYPE_CHECKING

from hymt.cli.help_format import DefaultsHelpFormatter
from hymt.cli.verbosity import log_level
from hymt.engine.config import KV_CACHE_DTYPE_CHOICES, QUANTIZATION_CHOICES
from hymt.engine.factory import BACKENDS
from hymt.families import DEFAULT_MODEL
from hymt.scale.replica_options import add_replica_arguments, replica_config_from_args
from hymt.server.settings import LOG_LEVEL_CHOICES, ServerSettings

if TYPE_CHECKING:
    import uvicorn
    from fastapi import FastAPI

#: Exit status when the model could not be loaded at start.
EXIT_LOAD_FAILED = 1
#: How often the load watcher looks at the model service.
_WATCH_INTERVAL_S = 0.2


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("serve", help="serve the web UI and the translation APIs",
                              description=__doc__, formatter_class=DefaultsHelpFormatter)
    p.add_argument("--model", default=DEFAULT_MODEL, help="hub id or local checkpoint directory")
    p.add_argument("--family", default=None, help="official family name, when not detected from the checkpoint")
    p.add_argument("--engine", default="native", choices=BACKENDS,
                   help="token engine: native (hymt's own, paged KV cache, batching), transformers "
                        "(Hugging Face generate) or openai (a remote OpenAI-compatible server, --openai-base-url)")
    p.add_argument("--openai-base-url", default=None, metavar="URL",
                   help="remote OpenAI-compatible server (--engine openai)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on; 0.0.0.0 for every interface")
    p.add_argument("--port", type=int, default=8000, metavar="N", help="port to listen on")
    p.add_argument("--api-key", action="append", default=[], metavar="KEY",
                   help="accepted API key (repeatable; also env HYMT_API_KEYS, comma-separated); none: open")
    p.add_argument("--gpu-memory-gb", type=float, default=None, metavar="GB", help="memory budget of the engine in GB")
    p.add_argument("--quantization", default=None, choices=QUANTIZATION_CHOICES[1:],
                   help="weight quantization at load (native engine); fp8 needs a Hopper-class GPU")
    p.add_argument("--kv-cache-dtype", default="auto", choices=KV_CACHE_DTYPE_CHOICES,
                   help="paged KV cache dtype (native engine); fp8 doubles the cached tokens")
    p.add_argument("--device", default=None, help="torch device (default: cuda when available, else cpu)")
    p.add_argument("--engine-in-process", action="store_true",
                   help="run the native/transformers engine in the server process (default: a child "
                        "process of its own, so the HTTP layer never competes with it for the GIL)")
    p.add_argument("--max-queue", type=int, default=256, metavar="N", help="requests admitted at once; more get 429")
    p.add_argument("--max-chars", type=int, default=20000, metavar="N", help="characters per request; more get 413")
    p.add_argument("--max-batch", type=int, default=128, metavar="N", help="items per request; more get 413")
    p.add_argument("--request-timeout", type=float, default=120.0, metavar="S",
                   help="seconds before a request gets 504")
    p.add_argument("--max-tokens", type=int, default=None, metavar="N",
                   help="most tokens per segment's answer when a request sets no sampling "
                        "(default: the translator's, 3 x source tokens + 64)")
    p.add_argument("--cors-origins", nargs="*", default=["*"], metavar="ORIGIN",
                   help="allowed browser origins (* for any)")
    p.add_argument("--no-cache", action="store_true", help="do not use the translation cache")
    p.add_argument("--no-prompt-guard", action="store_true",
                   help="send OpenAI chats as given, never rewrite generic translation prompts")
    p.add_argument("--served-model-name", default=None, metavar="NAME", help="model id shown to clients")
    p.add_argument("--keep-serving-on-load-error", action="store_true",
                   help="when the model cannot be loaded, keep serving (the web UI and /ready report the "
                        "error) instead of exiting with status 1")
    p.add_argument("--log-level", default=None, choices=LOG_LEVEL_CHOICES,
                   help="log level of the server and the engine (default: info; -v debug, -q error)")
    p.add_argument("--log-format", default=None, choices=("text", "json"),
                   help="log lines on stderr, uvicorn's included (default: $HYMT_LOG_FORMAT, else text "
                        "when stderr is a terminal, JSON lines otherwise)")
    add_replica_arguments(p)
    p.set_defaults(func=run)


def settings_from_args(args: argparse.Namespace) -> ServerSettings:
    """ServerSettings from the parsed command line (and HYMT_API_KEYS)."""

    env_keys = [k for k in os.environ.get("HYMT_API_KEYS", "").split(",") if k.strip()]
    level = args.log_level or logging.getLevelName(log_level(args, default=logging.INFO)).lower()
    return ServerSettings(
        model=args.model, family=args.family, engine=args.engine, openai_base_url=args.openai_base_url,
        host=args.host, port=args.port, api_keys=tuple(args.api_key) + tuple(env_keys),
        gpu_memory_gb=args.gpu_memory_gb, quantization=args.quantization, kv_cache_dtype=args.kv_cache_dtype,
        device=args.device, engine_process=not args.engine_in_process,
        max_queue=args.max_queue, max_chars=args.max_chars, max_batch=args.max_batch,
        request_timeout=args.request_timeout, max_tokens=args.max_tokens,
        cors_origins=tuple(args.cors_origins or ("*",)),
        cache=not args.no_cache, log_level=level, prompt_guard=not args.no_prompt_guard,
        served_model_name=args.served_model_name,
    )


def run(args: argparse.Namespace) -> int:
    import uvicorn

    from hymt.server.app import create_app
    from hymt.server.logging import configure_logging

    settings = settings_from_args(args)
    configure_logging(settings.log_level, args.log_format)
    replicas = replica_config_from_args(args)
    if replicas is not None:  # Ray Serve replicas behind one endpoint (hymt/scale)
        from hymt.scale.serve_replicas import serve_replicas

        return serve_replicas(settings, replicas)
    app = create_app(settings)
    # log_config=None: uvicorn's loggers keep the handler configure_logging gave them. Its own
    # access log is off: hymt.access writes structured lines without bodies or query strings.
    config = uvicorn.Config(app, host=settings.host, port=settings.port, log_level=settings.log_level,
                            log_config=None, access_log=False, timeout_graceful_shutdown=5)
    server = uvicorn.Server(config)
    failure: list[str] = []
    if not args.keep_serving_on_load_error:
        watcher = threading.Thread(target=_stop_on_load_error, args=(app, server, failure),
                                   name="hymt-load-watch", daemon=True)
        watcher.start()
    server.run()
    if failure:
        print(f"hymt: error: the model could not be loaded: {failure[0]}\n"
              "(--keep-serving-on-load-error keeps the server up to report it instead)", file=sys.stderr)
        return EXIT_LOAD_FAILED
    return 0


def _stop_on_load_error(app: FastAPI, server: uvicorn.Server, failure: list[str]) -> None:
    """Asks uvicorn to stop once the model service reports a failed load; returns when the
    model is ready or the server stops for another reason."""
    service = app.state.hymt.service
    while True:
        time.sleep(_WATCH_INTERVAL_S)
        if service.error:
            failure.append(service.error)
            server.should_exit = True
            return
        if service.ready or server.should_exit:
            return
