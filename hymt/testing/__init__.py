"""Checkpoints without downloads: tiny models of each family for tests, real shapes for benchmarks."""
from hymt.testing.real_shape_checkpoint import (
    REAL_SPECIAL_IDS,
    real_shape_checkpoint_config,
    write_real_shape_checkpoint,
)
from hymt.testing.real_shapes import real_shape_config
from hymt.testing.scripted_engine import Answer, ScriptedEngine, source_of
from hymt.testing.tiny_checkpoint import (
    ENGINE_TEST_CONFIG,
    TINY_FAMILIES,
    tiny_config,
    tiny_state_dict,
    write_tiny_checkpoint,
    write_tiny_metadata,
)

FAMILY_NAMES = tuple(f.name for f in TINY_FAMILIES)

__all__ = [
    "ENGINE_TEST_CONFIG", "FAMILY_NAMES", "REAL_SPECIAL_IDS", "Answer", "ScriptedEngine",
    "real_shape_checkpoint_config",
    "real_shape_config", "source_of", "tiny_config", "tiny_state_dict", "write_real_shape_checkpoint",
    "write_tiny_checkpoint", "write_tiny_metadata",
]
