"""The `--replicas` family of `hymt serve` options, and the ReplicaConfig they give."""
from __future__ import annotations

import argparse

from hymt.scale.ray_import import RAY_INSTALL
from hymt.scale.replica_config import ReplicaConfig

_DEFAULTS = ReplicaConfig()


def add_replica_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("replicas on Ray Serve", "several servers behind one endpoint "
                                      f"(needs: {RAY_INSTALL}; docs/SCALING.md)")
    group.add_argument("--replicas", type=int, default=None, metavar="N",
                       help="run N replicas of this server on Ray Serve, one engine each, behind one endpoint "
                            "(without it: one server, no Ray)")
    group.add_argument("--max-replicas", type=int, default=None, metavar="N",
                       help="autoscale between --replicas and N on ongoing requests")
    group.add_argument("--target-ongoing-requests", type=float, default=_DEFAULTS.target_ongoing_requests,
                       metavar="N", help="ongoing requests per replica the autoscaler aims at")
    group.add_argument("--gpus-per-replica", type=float, default=None, metavar="G",
                       help="GPUs per replica, fractions share one (default: 1 when the cluster has GPUs, else 0)")
    group.add_argument("--cpus-per-replica", type=float, default=_DEFAULTS.cpus_per_replica, metavar="C",
                       help="CPUs reserved per replica")
    group.add_argument("--state-dir", default=None, metavar="DIR",
                       help="directory of the SQLite stores every replica shares (translation cache, glossaries, "
                            "document jobs); on several hosts a path every node sees (default: the cache directory)")
    group.add_argument("--ray-address", default=None, metavar="ADDR",
                       help="Ray cluster to join (default: $RAY_ADDRESS, else a local cluster)")
    group.add_argument("--health-check-period", type=float, default=_DEFAULTS.health_check_period_s, metavar="S",
                       help="seconds between Ray's checks that each replica's engine lives")


def replica_config_from_args(args: argparse.Namespace) -> ReplicaConfig | None:
    """The ReplicaConfig of the command line, or None without --replicas (a plain server)."""
    if args.replicas is None:
        return None
    return ReplicaConfig(
        replicas=args.replicas, max_replicas=args.max_replicas, target_ongoing_requests=args.target_ongoing_requests,
        gpus_per_replica=args.gpus_per_replica, cpus_per_replica=args.cpus_per_replica, state_dir=args.state_dir,
        ray_address=args.ray_address, health_check_period_s=args.health_check_period,
    )
