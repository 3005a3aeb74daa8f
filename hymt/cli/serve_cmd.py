"""`hymt serve`: the web UI and every API on one port, one model loaded once.

    hymt serve                                   # 127.0.0.1:8000, tencent/HY-MT1.5-1.8B
    hymt serve --model ./HY-MT1.5-7B --port 9000 --api-key secret --max-queue 64

The socket opens at once (`/health` answers); the model loads in the background and
`/ready` turns 200 when it is warm. If the model cannot be loaded, the reason is printed
and the server exits with status 1 (--keep-serving-on-load-error keeps the web UI up to
show it instead). An engine process that dies is restarted; after --engine-restarts
failed restarts in a row the server exits with status 3. SIGTERM (or Ctrl-C) drains: new
requests get 503, running ones get --shutdown-timeout seconds, then the server exits 0.
--http-workers N runs N HTTP processes on the port in front of the one engine process
(docs/ARCHITECTURE.md: the server's processes).
Logs go to stderr, all in one format: text on a terminal, JSON lines otherwise
(--log-format; also env HYMT_LOG_FORMAT).
"""
from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import TYPE_CHECKING

from hymt.cli.engine_args import add_engine_arguments, engine_config_from_args
from hymt.cli.help_format import DefaultsHelpFormatter
from hymt.cli.verbosity import log_level
from hymt.engine.backend_names import BACKENDS
from hymt.errors import InvalidInputError
from hymt.families import DEFAULT_MODEL
from hymt.scale.replica_options import add_replica_arguments, replica_config_from_args
from hymt.server.settings import LOG_LEVEL_CHOICES, ServerSettings, default_of

if TYPE_CHECKING:
    from hymt.server.service import ModelService

#: File descriptors kept free beyond --max-connections (model files, the engine's pipe, logs).
_SPARE_FDS = 256


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("serve", help="serve the web UI and the translation APIs",
                              description=__doc__, formatter_class=DefaultsHelpFormatter)
    _add_model_arguments(p)
    _add_listener_arguments(p.add_argument_group("listening and access"))
    _add_limit_arguments(p.add_argument_group("request limits"))
    _add_timeout_arguments(p.add_argument_group("timeouts"))
    _add_log_arguments(p.add_argument_group("logging"))
    _add_document_arguments(p.add_argument_group("document jobs (/api/documents, /v2/document, /translate_file)"))
    add_engine_arguments(p.add_argument_group("native engine (--engine native)"))
    add_replica_arguments(p)
    p.set_defaults(func=run)


def _add_model_arguments(p: argparse.ArgumentParser) -> None:
    """The model, its engine and what the server does with translations."""
    p.add_argument("--model", default=DEFAULT_MODEL, help="hub id or local checkpoint directory")
    p.add_argument("--family", default=None, help="official family name, when not detected from the checkpoint")
    p.add_argument("--engine", default="native", choices=BACKENDS,
                   help="token engine: native (hymt's own, paged KV cache, batching), transformers "
                        "(Hugging Face generate) or openai (a remote OpenAI-compatible server, --openai-base-url)")
    p.add_argument("--openai-base-url", default=None, metavar="URL",
                   help="remote OpenAI-compatible server (--engine openai)")
    p.add_argument("--device", default=None, help="torch device (default: cuda when available, else cpu)")
    p.add_argument("--engine-in-process", action="store_true",
                   help="run the native/transformers engine in the server process (default: a child "
                        "process of its own, so the HTTP layer never competes with it for the GIL)")
    p.add_argument("--engine-restarts", type=int, default=default_of("engine_restarts"), metavar="N",
                   help="failed engine restarts in a row (rebuild fails, or the engine dies again within a "
                        "minute) before the server exits with status 3; 0: exit when the engine dies")
    p.add_argument("--max-tokens", type=int, default=None, metavar="N",
                   help="most tokens per segment's answer when a request sets no sampling "
                        "(default: the translator's, 3 x source tokens + 64)")
    p.add_argument("--no-cache", action="store_true", help="do not use the translation cache")
    p.add_argument("--no-prompt-guard", action="store_true",
                   help="send OpenAI chats as given, never rewrite generic translation prompts")
    p.add_argument("--served-model-name", default=None, metavar="NAME", help="model id shown to clients")
    p.add_argument("--keep-serving-on-load-error", action="store_true",
                   help="when the model cannot be loaded, keep serving (the web UI and /ready report the "
                        "error) instead of exiting with status 1")


def _add_listener_arguments(p: argparse._ArgumentGroup) -> None:
    p.add_argument("--host", default="127.0.0.1", help="address to listen on; 0.0.0.0 for every interface")
    p.add_argument("--port", type=int, default=8000, metavar="N", help="port to listen on")
    p.add_argument("--api-key", action="append", default=[], metavar="KEY",
                   help="accepted API key (repeatable; also env HYMT_API_KEYS, comma-separated); none: open")
    p.add_argument("--cors-origins", nargs="*", default=None, metavar="ORIGIN",
                   help="browser origins allowed to call the server, replacing the default of loopback pages and "
                        "browser extensions: exact (https://app.example), any port (http://host:*), any host "
                        "(chrome-extension://*) or * (any website: see the README first)")
    p.add_argument("--http-workers", type=_positive_int, default=1, metavar="N",
                   help="HTTP processes on the port, in front of the one engine process (Linux); --max-queue, "
                        "--max-connections and --max-jobs apply to each")
    p.add_argument("--max-connections", type=int, default=default_of("max_connections"), metavar="N",
                   help="open connections at once; requests past it get 503")


def _add_limit_arguments(p: argparse._ArgumentGroup) -> None:
    p.add_argument("--max-queue", type=int, default=default_of("max_queue"), metavar="N",
                   help="texts admitted at once over all requests (a request of k texts takes k); more get 429")
    p.add_argument("--max-chars", type=int, default=default_of("max_chars"), metavar="N",
                   help="characters per request; more get 413")
    p.add_argument("--max-batch", type=int, default=default_of("max_batch"), metavar="N",
                   help="items per request; more get 413")
    p.add_argument("--max-body-bytes", type=int, default=default_of("max_body_bytes"), metavar="N",
                   help="bytes per request body, refused (413) before it is read")
    p.add_argument("--max-header-bytes", type=int, default=default_of("max_header_bytes"), metavar="N",
                   help="bytes of one request's headers; more get 431")
    p.add_argument("--max-glossary-terms", type=int, default=default_of("max_glossary_terms"), metavar="N",
                   help="glossary entries per request, inline or stored; more get 413")
    p.add_argument("--max-glossary-bytes", type=int, default=default_of("max_glossary_bytes"), metavar="N",
                   help="UTF-8 bytes of a request's glossary terms; more get 413")


def _add_timeout_arguments(p: argparse._ArgumentGroup) -> None:
    p.add_argument("--request-timeout", type=float, default=default_of("request_timeout"), metavar="S",
                   help="seconds before a request gets 504")
    p.add_argument("--shutdown-timeout", type=float, default=None, metavar="S",
                   help="seconds SIGTERM lets running requests finish before cutting them "
                        "(default: --request-timeout)")
    p.add_argument("--header-timeout", type=float, default=default_of("header_timeout"), metavar="S",
                   help="seconds a connection may take to send a request's headers (or its first request)")
    p.add_argument("--body-timeout", type=float, default=default_of("body_timeout"), metavar="S",
                   help="seconds a request may take to send its body; slower ones get 408")
    p.add_argument("--keep-alive-timeout", type=float, default=default_of("keep_alive_timeout"), metavar="S",
                   help="seconds an idle keep-alive connection stays open")


def _add_log_arguments(p: argparse._ArgumentGroup) -> None:
    p.add_argument("--log-level", default=None, choices=LOG_LEVEL_CHOICES,
                   help="log level of the server and the engine (default: info; -v debug, -q error)")
    p.add_argument("--log-format", default=None, choices=("text", "json"),
                   help="log lines on stderr, uvicorn's included (default: $HYMT_LOG_FORMAT, else text "
                        "when stderr is a terminal, JSON lines otherwise)")


def _add_document_arguments(p: argparse._ArgumentGroup) -> None:
    p.add_argument("--jobs-dir", default=None, metavar="DIR",
                   help="where jobs and their files are kept (default: jobs/ beside the translation cache); "
                        "servers sharing it share the jobs")
    p.add_argument("--job-ttl", type=float, default=86400.0, metavar="S",
                   help="seconds a finished job and its files are kept")
    p.add_argument("--max-jobs", type=int, default=2, metavar="N",
                   help="documents translated at once (each holds one --max-queue slot)")
    p.add_argument("--max-file-mb", type=float, default=50.0, metavar="MB",
                   help="largest document accepted; larger ones get 413")
    p.add_argument("--max-segments", type=int, default=100_000, metavar="N",
                   help="most segments (sentences) in one document; more get 413")


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def settings_from_args(args: argparse.Namespace) -> ServerSettings:
    """ServerSettings from the parsed command line (and HYMT_API_KEYS)."""

    env_keys = [k for k in os.environ.get("HYMT_API_KEYS", "").split(",") if k.strip()]
    level = args.log_level or logging.getLevelName(log_level(args, default=logging.INFO)).lower()
    return ServerSettings(
        model=args.model, family=args.family, engine=args.engine, openai_base_url=args.openai_base_url,
        host=args.host, port=args.port, api_keys=tuple(args.api_key) + tuple(env_keys),
        device=args.device, engine_config=engine_config_from_args(args, args.engine),
        engine_process=not args.engine_in_process,
        max_queue=args.max_queue, max_chars=args.max_chars, max_batch=args.max_batch,
        max_body_bytes=args.max_body_bytes, max_glossary_terms=args.max_glossary_terms,
        max_glossary_bytes=args.max_glossary_bytes, request_timeout=args.request_timeout,
        shutdown_timeout=args.shutdown_timeout, header_timeout=args.header_timeout, body_timeout=args.body_timeout,
        keep_alive_timeout=args.keep_alive_timeout, max_header_bytes=args.max_header_bytes,
        max_connections=args.max_connections, engine_restarts=args.engine_restarts, max_tokens=args.max_tokens,
        cors_origins=tuple(args.cors_origins) if args.cors_origins else default_of("cors_origins"),  # type: ignore[arg-type]
        cache=not args.no_cache, log_level=level, prompt_guard=not args.no_prompt_guard,
        served_model_name=args.served_model_name,
        jobs_dir=args.jobs_dir, job_ttl_s=args.job_ttl, max_jobs=args.max_jobs, max_file_mb=args.max_file_mb,
        max_segments=args.max_segments,
    )


def run(args: argparse.Namespace) -> int:
    from hymt.server.app import create_app
    from hymt.server.http_server import draining_server, stop_when_given_up
    from hymt.server.logging import configure_logging

    settings = settings_from_args(args)
    configure_logging(settings.log_level, args.log_format)
    replicas = replica_config_from_args(args)
    if replicas is not None:  # Ray Serve replicas behind one endpoint (hymt/scale)
        if args.http_workers != 1:
            raise InvalidInputError("--http-workers and --replicas do not go together: each Ray replica is one "
                                    "HTTP process", field="http_workers")
        from hymt.scale.serve_replicas import serve_replicas

        return serve_replicas(settings, replicas)
    _raise_fd_limit(settings.max_connections * args.http_workers + _SPARE_FDS)
    if args.http_workers != 1:  # N HTTP processes in front of one engine process
        from hymt.server.http_workers import serve_workers

        outcome = serve_workers(settings, args.http_workers, keep_serving_on_load_error=args.keep_serving_on_load_error,
                                log_format=args.log_format)
        return _exit_status(outcome.status, outcome.error, args.keep_serving_on_load_error)
    app = create_app(settings)
    server = draining_server(app, settings)
    service: ModelService = app.state.hymt.service
    stop_when_given_up(service, server, args.keep_serving_on_load_error)
    server.run()
    status = service.supervisor.exit_status if service.supervisor.gave_up.is_set() else 0
    return _exit_status(status, service.error, args.keep_serving_on_load_error)


def _exit_status(status: int, error: str | None, keep_serving_on_load_error: bool) -> int:
    """The command's exit status; the reason printed when it is not 0."""
    from hymt.server.supervisor import EXIT_ENGINE_FAILED, EXIT_LOAD_FAILED

    if status == EXIT_LOAD_FAILED and not keep_serving_on_load_error:
        print(f"hymt: error: the model could not be loaded: {error}\n"
              "(--keep-serving-on-load-error keeps the server up to report it instead)", file=sys.stderr)
        return EXIT_LOAD_FAILED
    if status == EXIT_ENGINE_FAILED:
        print(f"hymt: error: {error}", file=sys.stderr)
        return EXIT_ENGINE_FAILED
    return 0


def _raise_fd_limit(wanted: int) -> None:
    """Raise the soft limit on open files toward `wanted` (within the hard limit), so that
    --max-connections is reached before the process runs out of descriptors."""
    try:
        import resource
    except ImportError:  # Windows: no such limit to raise
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    if target < wanted:
        logging.getLogger(__name__).warning(
            "open-file limit %d is below --max-connections + %d; connections past it will fail", hard, _SPARE_FDS)
