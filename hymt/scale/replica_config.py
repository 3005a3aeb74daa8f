"""ReplicaConfig: how many hymt servers Ray Serve runs, on what, and how it scales them."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hymt.errors import InvalidInputError
from hymt.server.settings import ServerSettings
from hymt.translate.cache import default_cache_path

#: The Serve application's default name (`serve status`, `serve shutdown`).
APP_NAME = "hymt"
#: The deployment's name inside the application.
DEPLOYMENT_NAME = "HymtServer"


@dataclass(frozen=True)
class ReplicaConfig:
    """Ray Serve replicas of the hymt server: one engine each, one HTTP endpoint for all.

    Attributes:
        replicas: replicas started (and kept, the minimum under autoscaling).
        max_replicas: autoscale between `replicas` and this on ongoing requests; None or
            equal to `replicas`: a fixed count.
        target_ongoing_requests: the ongoing HTTP requests per replica the autoscaler aims at.
        max_ongoing_requests: requests Ray sends one replica at once; None: the server's
            --max-queue, so hymt's own admission sees every request it may hold.
        max_queued_requests: requests Ray's router holds while every replica is full; past
            that, Ray answers 503 with Retry-After. None: the server's --max-queue.
        gpus_per_replica: GPUs reserved for each replica (fractions share a GPU); None: 1
            when the cluster has GPUs and the device is not "cpu", else 0.
        cpus_per_replica: CPUs reserved for each replica (its HTTP layer and engine process).
        state_dir: the directory every replica keeps its SQLite stores in (translation
            cache, glossaries, document jobs); None: this host's cache directory. On
            several hosts it must be a path every node sees (docs/SCALING.md).
        ray_address: the Ray cluster to join; None: $RAY_ADDRESS, else a local cluster.
        health_check_period_s / health_check_timeout_s: how often Ray asks a replica whether
            its engine lives, and how long it waits for the answer.
        load_timeout_s: how long a replica may take to load its model before Ray gives up.
        name: the Serve application's name.
    """

    replicas: int = 1
    max_replicas: int | None = None
    target_ongoing_requests: float = 64.0
    max_ongoing_requests: int | None = None
    max_queued_requests: int | None = None
    gpus_per_replica: float | None = None
    cpus_per_replica: float = 1.0
    state_dir: str | None = None
    ray_address: str | None = None
    health_check_period_s: float = 10.0
    health_check_timeout_s: float = 30.0
    load_timeout_s: float = 1800.0
    name: str = APP_NAME

    def __post_init__(self) -> None:
        if not isinstance(self.replicas, int) or self.replicas < 1:
            raise InvalidInputError(f"replicas must be an integer >= 1, got {self.replicas!r}", field="replicas")
        if self.max_replicas is not None and self.max_replicas < self.replicas:
            raise InvalidInputError(f"max_replicas must be >= replicas ({self.replicas}), got {self.max_replicas}",
                                    field="max_replicas")
        for name in ("max_ongoing_requests", "max_queued_requests"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise InvalidInputError(f"{name} must be >= 1, got {value}", field=name)
        if self.gpus_per_replica is not None and self.gpus_per_replica < 0:
            raise InvalidInputError(f"gpus_per_replica must be >= 0, got {self.gpus_per_replica}",
                                    field="gpus_per_replica")
        for name in ("target_ongoing_requests", "cpus_per_replica", "health_check_period_s",
                     "health_check_timeout_s", "load_timeout_s"):
            if getattr(self, name) <= 0:
                raise InvalidInputError(f"{name} must be > 0, got {getattr(self, name)}", field=name)
        if not self.name.strip():
            raise InvalidInputError("name must not be empty", field="name")

    @property
    def autoscaling(self) -> bool:
        return self.max_replicas is not None and self.max_replicas > self.replicas

    def store_dir(self) -> Path:
        """The shared store directory: `state_dir`, else this host's translation-cache directory."""
        return Path(self.state_dir).expanduser() if self.state_dir else default_cache_path().parent

    def deployment_options(self, settings: ServerSettings, gpus_per_replica: float) -> dict[str, Any]:
        """Keyword arguments of `serve.deployment(...)` for replicas of a server with `settings`."""
        options: dict[str, Any] = {
            "name": DEPLOYMENT_NAME,
            "ray_actor_options": {"num_cpus": self.cpus_per_replica, "num_gpus": gpus_per_replica},
            "max_ongoing_requests": self.max_ongoing_requests or settings.max_queue,
            "max_queued_requests": self.max_queued_requests or settings.max_queue,
            "health_check_period_s": self.health_check_period_s,
            "health_check_timeout_s": self.health_check_timeout_s,
            # in-flight requests of a replica being stopped may finish within the request timeout
            "graceful_shutdown_timeout_s": settings.request_timeout,
        }
        if self.autoscaling:
            options["autoscaling_config"] = {
                "min_replicas": self.replicas, "initial_replicas": self.replicas,
                "max_replicas": self.max_replicas, "target_ongoing_requests": self.target_ongoing_requests,
            }
        else:
            options["num_replicas"] = self.replicas
        return options

    def replace(self, **changes: Any) -> ReplicaConfig:
        return dataclasses.replace(self, **changes)


REPLICA_FIELDS = tuple(f.name for f in dataclasses.fields(ReplicaConfig))
