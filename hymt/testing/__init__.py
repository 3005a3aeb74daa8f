"""Checkpoints without downloads: tiny models of each family for tests, real shapes for benchmarks."""
from hymt.testing.real_shapes import real_shape_config
from hymt.testing.tiny_checkpoint import (
    TINY_FAMILIES,
    tiny_config,
    tiny_state_dict,
    write_tiny_checkpoint,
    write_tiny_metadata,
)

FAMILY_NAMES = tuple(f.name for f in TINY_FAMILIES)

__all__ = [
    "FAMILY_NAMES", "real_shape_config", "tiny_config", "tiny_state_dict", "write_tiny_checkpoint",
    "write_tiny_metadata",
]
