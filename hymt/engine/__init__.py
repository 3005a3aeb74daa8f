"""hymt's token engines: token ids in, token ids out.

    from hymt.engine import LLM, SamplingParams, EngineConfig

The light shared types import eagerly; the engines (which import torch and the model code)
load on first use, so `from hymt.engine.sampling import SamplingParams` stays cheap.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from hymt.engine.config import EngineConfig
from hymt.engine.interface import Engine, EngineStats
from hymt.engine.memory_report import MemoryReport
from hymt.engine.outputs import RequestOutput
from hymt.engine.sampling import SamplingParams

_LAZY = {
    "LLM": "hymt.engine.llm",
    "NativeEngine": "hymt.engine.native_engine",
    "AsyncEngine": "hymt.engine.async_engine",
    "RequestHandle": "hymt.engine.async_engine",
    "create_engine": "hymt.engine.factory",
}

__all__ = [
    "AsyncEngine", "Engine", "EngineConfig", "EngineStats", "LLM", "MemoryReport", "NativeEngine", "RequestHandle",
    "RequestOutput", "SamplingParams", "create_engine",
]

if TYPE_CHECKING:
    from hymt.engine.async_engine import AsyncEngine, RequestHandle
    from hymt.engine.factory import create_engine
    from hymt.engine.llm import LLM
    from hymt.engine.native_engine import NativeEngine


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'hymt.engine' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
