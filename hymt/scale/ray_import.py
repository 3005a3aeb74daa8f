"""Ray, imported only when a feature that needs it is used."""
from __future__ import annotations

import importlib
import importlib.util
import os
from types import ModuleType

from hymt.errors import InvalidInputError

#: How to install what this package needs; every "Ray is missing" message names it.
RAY_INSTALL = 'pip install "hymt[ray]"'
#: The environment variable Ray itself reads for the cluster to join.
RAY_ADDRESS_ENV = "RAY_ADDRESS"


def ray_installed() -> bool:
    """True when `ray` can be imported (without importing it)."""
    return importlib.util.find_spec("ray") is not None


def import_ray(module: str, *, field: str) -> ModuleType:
    """`ray` or one of its modules ("ray.serve", "ray.data"); an InvalidInputError naming
    `field` (the option that asked for Ray) and the install command when it is missing."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise InvalidInputError(
            f"{field} needs Ray Serve and Ray Data, which are not installed ({exc}); install them with: {RAY_INSTALL}",
            field=field,
        ) from exc


def cluster_address(explicit: str | None = None) -> str | None:
    """The Ray cluster to join: `explicit`, else $RAY_ADDRESS, else None (start a local one)."""
    address = explicit or os.environ.get(RAY_ADDRESS_ENV, "").strip()
    return address or None
