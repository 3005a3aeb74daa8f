"""The native engine's command-line flags: one definition for every command that builds an engine.

Each flag defaults to None, so that only what was typed overrides EngineConfig: an unset step
size stays at its default, which the engine may still shrink under a small memory budget
(hymt.engine.memory.fit_config_to_budget changes only the fields at their default values).
"""
from __future__ import annotations

import argparse
from typing import Any

from hymt.engine.config import KV_CACHE_DTYPE_CHOICES, QUANTIZATION_CHOICES, EngineConfig, check_backend_config
from hymt.errors import InvalidInputError

#: The flags whose value is the EngineConfig field of the same name (--no-prefix-cache is not).
_FIELD_FLAGS = ("gpu_memory_gb", "gpu_memory_utilization", "quantization", "kv_cache_dtype", "max_num_seqs",
                "max_num_batched_tokens", "enforce_eager", "cuda_graph_max_tokens")
#: EngineConfig field -> the flag that sets it, for error messages.
_FLAG_OF = {**{name: "--" + name.replace("_", "-") for name in _FIELD_FLAGS},
            "enable_prefix_caching": "--no-prefix-cache"}


def add_engine_arguments(group: argparse._ArgumentGroup) -> None:
    """Add the native engine's memory, quantization and step-size flags to `group`."""
    d = EngineConfig
    group.add_argument("--gpu-memory-gb", type=float, metavar="GB",
                       help="memory budget of the engine in GB (default: --gpu-memory-utilization of the GPU)")
    group.add_argument("--gpu-memory-utilization", type=float, metavar="F",
                       help=f"share of the GPU's memory the engine may take when --gpu-memory-gb is not set "
                            f"(default {d.gpu_memory_utilization})")
    group.add_argument("--quantization", choices=QUANTIZATION_CHOICES[1:],
                       help="weight quantization at load; fp8 needs a Hopper-class GPU (default: none)")
    group.add_argument("--kv-cache-dtype", choices=KV_CACHE_DTYPE_CHOICES,
                       help="paged KV cache dtype; fp8 doubles the cached tokens (default auto = the model dtype)")
    group.add_argument("--no-prefix-cache", action="store_true", default=None,
                       help="no sharing of KV blocks between prompts that start alike (for measuring the "
                            "engine without the prefix cache)")
    group.add_argument("--max-num-seqs", type=int, metavar="N",
                       help=f"most sequences in one step (default {d.max_num_seqs}; smaller under a small "
                            "memory budget)")
    group.add_argument("--max-num-batched-tokens", type=int, metavar="N",
                       help=f"token budget of one step, prompt and answer tokens together (default "
                            f"{d.max_num_batched_tokens}; smaller under a small memory budget); at most "
                            "--cuda-graph-max-tokens keeps every step in a CUDA graph, which suits a GPU server")
    group.add_argument("--enforce-eager", action="store_true", default=None,
                       help="no CUDA graphs (less memory and a faster start, slower steps)")
    group.add_argument("--cuda-graph-max-tokens", type=int, metavar="N",
                       help=f"largest step with prompt tokens run as a CUDA graph (default "
                            f"{d.cuda_graph_max_tokens}; 0: such steps run eagerly)")


def engine_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The EngineConfig fields the command line set (those left unset are absent)."""
    overrides = {name: getattr(args, name) for name in _FIELD_FLAGS if getattr(args, name) is not None}
    if args.no_prefix_cache:
        overrides["enable_prefix_caching"] = False
    return overrides


def engine_config_from_args(args: argparse.Namespace, backend: str = "native") -> EngineConfig:
    """The EngineConfig of the command line: its defaults, with what the flags set. With another
    `backend`, a flag that was set is an error now, before any model loads."""
    try:
        config = EngineConfig(**engine_overrides(args))
        check_backend_config(backend, config)
    except InvalidInputError as exc:  # name the flag the user typed beside the field
        flag = _FLAG_OF.get(exc.field or "")
        if flag is None:
            raise
        raise InvalidInputError(f"{flag}: {exc}", field=exc.field) from exc
    return config
