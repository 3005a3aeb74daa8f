"""The Ray Serve application: replicas of the whole hymt server behind one HTTP endpoint.

Each replica builds its own server with create_app (every protocol, the web UI, its own
ModelService and engine) as the ingress of the deployment, wrapped in a ReplicaGuard
(readiness, liveness, retryable answers). Ray's proxy is the one endpoint; its router spreads
requests over the replicas by their ongoing requests, and its controller keeps the replica
count (or autoscales it) and replaces a replica whose health check fails.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

from hymt.scale.ray_import import import_ray
from hymt.scale.replica_config import ReplicaConfig
from hymt.scale.replica_guard import ReplicaGuard
from hymt.server.service import TranslatorFactory
from hymt.server.settings import ServerSettings
from hymt.translate.cache import CACHE_DIR_ENV

if TYPE_CHECKING:
    from ray.serve import Application

#: Deployment constructor failures (a model that cannot load) before Ray reports the
#: deployment failed, instead of Ray's default of 20 slow retries.
MAX_CONSTRUCTOR_RETRIES = 3


def server_application(settings: ServerSettings, config: ReplicaConfig, *, gpus_per_replica: float,
                       translator_factory: TranslatorFactory | None = None) -> Application:
    """The Serve application (`serve.run(...)` it) of `config.replicas` hymt servers.

    Args:
        settings: every replica's server settings (host and port are Ray's proxy's).
        config: replica count, resources, autoscaling, the shared store directory.
        gpus_per_replica: GPUs reserved per replica (resolved by the caller).
        translator_factory: builds each replica's Translator (default: the server's own,
            from the settings); it travels to the replicas, so it must pickle.
    """
    serve = import_ray("ray.serve", field="replicas")
    store = str(config.store_dir())
    load_timeout_s = config.load_timeout_s
    engine_in_child = translator_factory is None and settings.engine != "openai" and settings.engine_process

    def build_replica_app() -> ReplicaGuard:
        from hymt.server.app import create_app
        from hymt.server.logging import configure_logging

        os.environ[CACHE_DIR_ENV] = store  # every replica's SQLite stores in one directory
        configure_logging(settings.log_level)
        replica_id = serve.get_replica_context().replica_id.unique_id
        return ReplicaGuard(create_app(settings, translator_factory=translator_factory), replica_id,
                            engine_in_child=engine_in_child, load_timeout_s=load_timeout_s)

    @serve.ingress(build_replica_app)
    class HymtServer:
        """One replica: the app comes from build_replica_app; Ray asks check_health."""

        def check_health(self) -> None:
            guard: ReplicaGuard = self.app  # type: ignore[attr-defined]  # set by serve.ingress
            failure = guard.failure()
            if failure is not None:
                raise RuntimeError(failure)

    options = config.deployment_options(settings, gpus_per_replica)
    return serve.deployment(HymtServer, max_constructor_retry_count=MAX_CONSTRUCTOR_RETRIES, **options).bind()


def resolve_gpus_per_replica(config: ReplicaConfig, settings: ServerSettings) -> float:
    """`config.gpus_per_replica`, else 0 on a CPU device or a cluster without GPUs, else 1."""
    if config.gpus_per_replica is not None:
        return config.gpus_per_replica
    if settings.device == "cpu":
        return 0.0
    ray = import_ray("ray", field="replicas")
    if not ray.is_initialized():  # `serve build` without a cluster: a GPU per replica, as served
        return 1.0
    return 1.0 if ray.cluster_resources().get("GPU", 0) >= 1 else 0.0
