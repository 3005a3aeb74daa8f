"""`hymt serve --replicas N`: start Ray Serve with N hymt replicas and serve until stopped.

Without a cluster address a local Ray cluster is started (and stopped at the end); with one
(--ray-address or $RAY_ADDRESS) the application is deployed there and deleted at the end.
The command returns once the application is stopped (Ctrl-C, SIGTERM), or at once with status
1 when the replicas cannot start (a model that does not load).
"""
from __future__ import annotations

import logging
import signal
import sys
import threading
from types import ModuleType

from hymt.scale.deployment import resolve_gpus_per_replica, server_application
from hymt.scale.ray_import import cluster_address, import_ray
from hymt.scale.replica_config import ReplicaConfig
from hymt.server.settings import ServerSettings

logger = logging.getLogger(__name__)

#: Exit status when the replicas could not start (as `hymt serve` when its model cannot load).
EXIT_START_FAILED = 1


def serve_replicas(settings: ServerSettings, config: ReplicaConfig) -> int:
    ray = import_ray("ray", field="replicas")
    serve = import_ray("ray.serve", field="replicas")
    address = cluster_address(config.ray_address)
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address=address, logging_level=logging.WARNING)
    try:
        try:
            serve.start(http_options={"host": settings.host, "port": settings.port})
        except RuntimeError as exc:  # Ray's proxy could not listen there (address in use, ...)
            print(f"hymt: error: Ray Serve could not listen on {settings.host}:{settings.port}: "
                  f"{_last_line(exc)}", file=sys.stderr)
            return EXIT_START_FAILED
        gpus = resolve_gpus_per_replica(config, settings)
        logger.info("starting %d replica(s) of %s on Ray Serve (%g GPU, %g CPU each; stores in %s)",
                    config.replicas, settings.model, gpus, config.cpus_per_replica, config.store_dir())
        try:  # returns once every replica's model is loaded and warm
            serve.run(server_application(settings, config, gpus_per_replica=gpus), name=config.name, route_prefix="/")
        except RuntimeError as exc:
            print(f"hymt: error: the replicas could not start: {_last_line(exc)}", file=sys.stderr)
            return EXIT_START_FAILED
        print(f"hymt: {config.replicas} replica(s) ready on http://{settings.host}:{settings.port} "
              f"(Ray Serve application {config.name!r}; Ctrl-C stops it)", file=sys.stderr, flush=True)
        _wait_for_stop()
        return 0
    finally:
        _stop(serve, config, local_cluster=started_here and address is None)
        if started_here:
            ray.shutdown()


def _wait_for_stop() -> None:
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: stop.set())
    try:
        while not stop.wait(1.0):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)


def _stop(serve: ModuleType, config: ReplicaConfig, *, local_cluster: bool) -> None:
    """Delete the application; on a local cluster started here, stop Serve itself."""
    try:
        if local_cluster:
            serve.shutdown()
        else:
            serve.delete(config.name)
    except Exception:  # stopping must not hide why we stop
        logger.warning("stopping Ray Serve failed", exc_info=True)


def _last_line(exc: BaseException) -> str:
    """The message of a Ray error, without the remote traceback it carries."""
    lines = [line for line in str(exc).strip().splitlines() if line.strip()]
    return lines[-1] if lines else type(exc).__name__
