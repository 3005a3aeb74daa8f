"""The names of the token-engine backends, without importing any of them.

The CLI, the server settings and the Translator validate a backend name at start-up, before
anything heavy loads; `hymt.engine.factory.create_engine` builds the backend a name stands for.
"""
from __future__ import annotations

from typing import Literal

BackendName = Literal["native", "transformers", "openai"]

#: "native": hymt's own engine; "transformers": HF generate() (reference and baseline);
#: "openai": a remote OpenAI-compatible completions server.
BACKENDS: tuple[BackendName, ...] = ("native", "transformers", "openai")
#: Backends that run a model in this machine's memory (and so can run in an engine process).
LOCAL_BACKENDS: tuple[BackendName, ...] = ("native", "transformers")
