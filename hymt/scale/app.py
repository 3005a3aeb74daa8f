"""`serve run hymt.scale.app:build [key=value ...]`: hymt replicas as Ray users start them.

    serve run hymt.scale.app:build model=tencent/HY-MT1.5-1.8B replicas=2
    serve run docs/serve-config.yaml          # the same, as a Serve config file (docs/SCALING.md)

The arguments are ServerSettings fields (model, family, engine, max_queue, api_keys, ...)
and ReplicaConfig fields (replicas, max_replicas, gpus_per_replica, state_dir, ...), as strings
from the command line or typed values from a config file's `args:`. `hymt serve --replicas N`
builds the same application.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter, ValidationError

from hymt.errors import InvalidInputError
from hymt.scale.deployment import resolve_gpus_per_replica, server_application
from hymt.scale.replica_config import REPLICA_FIELDS, ReplicaConfig
from hymt.server.settings import ServerSettings

if TYPE_CHECKING:
    from ray.serve import Application

#: Replica settings a Ray-started application does not take: Ray's proxy owns the socket,
#: and the cluster is the one `serve run` is connected to.
_NOT_ARGUMENTS = frozenset({"host", "port", "ray_address"})
SETTINGS_FIELDS = tuple(name for name in ServerSettings.__dataclass_fields__ if name not in _NOT_ARGUMENTS)
ARGUMENTS = SETTINGS_FIELDS + tuple(name for name in REPLICA_FIELDS if name not in _NOT_ARGUMENTS)


def build(args: Mapping[str, Any]) -> Application:
    """The application builder `serve run` calls with the `key=value` arguments."""
    settings, config = parse_arguments(args)
    return server_application(settings, config, gpus_per_replica=resolve_gpus_per_replica(config, settings))


def parse_arguments(args: Mapping[str, Any]) -> tuple[ServerSettings, ReplicaConfig]:
    """ServerSettings and ReplicaConfig from builder arguments, each checked and converted."""
    unknown = sorted(set(args) - set(ARGUMENTS))
    if unknown:
        raise InvalidInputError(f"unknown argument(s) {', '.join(unknown)}; valid: {', '.join(ARGUMENTS)}",
                                field=unknown[0])
    settings = _typed(ServerSettings, {k: v for k, v in args.items() if k in SETTINGS_FIELDS})
    config = _typed(ReplicaConfig, {k: v for k, v in args.items() if k in REPLICA_FIELDS})
    return settings, config


def _typed(kind: type, values: dict[str, Any]) -> Any:
    if "api_keys" in values and isinstance(values["api_keys"], str):  # key=a,b on the command line
        values["api_keys"] = [k for k in values["api_keys"].split(",") if k.strip()]
    try:
        return TypeAdapter(kind).validate_python(values)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = str(first["loc"][0]) if first["loc"] else None
        cause = first.get("ctx", {}).get("error")
        if isinstance(cause, InvalidInputError):
            raise cause from None
        raise InvalidInputError(f"{field}: {first['msg']} (got {first.get('input')!r})", field=field) from None
