"""Memory budget arithmetic: the budget, the weights it must hold, and what is left for KV blocks.

Pure functions of sizes; memory_planner.py measures the sizes on the device and calls them.
On CUDA the budget is `EngineConfig.gpu_memory_gb` (GB = 1e9 bytes) or
`gpu_memory_utilization` x total device memory. Weights, the sampler's state, the activation
peak of a profiling forward at max_num_batched_tokens, the CUDA-graph pool and a safety margin
come off the budget; what is left becomes KV blocks. `num_kv_blocks` overrides the sizing.
All figures are what torch's caching allocator holds (the CUDA context and cuBLAS handles,
~0.5 GB, are outside it).

On CPU there is no budget: `num_kv_blocks`, or enough blocks for max_num_seqs sequences of
max_model_len capped at CPU_KV_CAP_BYTES.
"""
from __future__ import annotations

import torch

from hymt.engine.config import EngineConfig
from hymt.engine.memory_report import GB
from hymt.engine.network.hunyuan_config import HunyuanDenseConfig
from hymt.errors import EngineError

CPU_KV_CAP_BYTES = 256 * 2**20
# Slack for allocator fragmentation, cuBLAS/Triton workspaces and graph-pool growth.
SAFETY_MARGIN_BYTES = 256 * 2**20
SAFETY_MARGIN_FRACTION = 0.02
# The planned graph pool is the largest bucket's, measured; the smaller buckets' captures add
# what they cannot fit into its freed blocks.
GRAPH_POOL_SLACK = 1.1


def budget_bytes(config: EngineConfig, device_total_bytes: int) -> int:
    """The engine's CUDA memory budget in bytes."""
    if config.gpu_memory_gb is not None:
        return int(config.gpu_memory_gb * GB)
    return int(config.gpu_memory_utilization * device_total_bytes)


def estimate_weight_bytes(model_config: dict, dtype: torch.dtype, quantization: str | None = None) -> int:
    """Bytes of a hunyuan_v1_dense model's weights, from config.json alone (pre-load check)."""
    cfg = HunyuanDenseConfig.from_dict(model_config)
    h, layers = cfg.hidden_size, cfg.num_layers
    linear = layers * (h * cfg.q_size + 2 * h * cfg.kv_size + cfg.q_size * h + 3 * h * cfg.intermediate_size)
    other = cfg.vocab_size * h * (1 if cfg.tie_word_embeddings else 2)
    other += layers * (2 * h + 2 * cfg.head_dim) + h
    elem = torch.empty((), dtype=dtype).element_size()
    per_linear: float = elem
    if quantization is not None:
        from hymt.engine.quant.schemes import SCHEMES

        if quantization in SCHEMES:
            per_linear = SCHEMES[quantization].bytes_per_weight()
    return int(linear * per_linear + other * elem)


#: Step sizes by the room a budget leaves beyond the weights, tightest last: below
#: `headroom` bytes the engine takes `step` (fit_config_to_budget). Measured on an H200: the
#: 1.8B shape in 8 GB gave 506 req/s with the defaults and 1,292 req/s with the 8 GB tier's
#: sizes (docs/BENCHMARKS.md); the 3 GB tier keeps the activation peak and the decode graphs
#: under ~1 GB for the 7B-in-8-GB and 1.8B-in-3-GB int4 configurations.
SMALL_BUDGET_TIERS = (
    (8 * GB, {"max_num_batched_tokens": 4096, "max_num_seqs": 256, "cuda_graph_max_bs": 256,
              "cuda_graph_max_tokens": 1024}),
    (3 * GB, {"max_num_batched_tokens": 2048, "max_num_seqs": 128, "cuda_graph_max_bs": 128,
              "cuda_graph_max_tokens": 512}),
)


def fit_config_to_budget(config: EngineConfig, budget: int, weight_bytes: int) -> EngineConfig:
    """`config` with smaller steps when the budget leaves little room beyond the weights.

    The activation peak grows with max_num_batched_tokens and the graph pool with
    cuda_graph_max_bs and cuda_graph_max_tokens; at the defaults they take ~4 GB, which in an 8 GB budget starves the
    KV cache. Only fields still at their defaults change: an explicit choice is kept.
    """
    step = None
    for headroom, sizes in SMALL_BUDGET_TIERS:
        if budget - weight_bytes < headroom:
            step = sizes
    if step is None:
        return config
    defaults = EngineConfig()
    changes = {name: value for name, value in step.items() if getattr(config, name) == getattr(defaults, name)}
    if not changes:
        return config
    from dataclasses import replace

    return replace(config, **changes)


def check_weights_fit(weights: int, budget: int, *, measured: bool) -> None:
    """Fail at start, saying how much is needed, when the weights alone exceed the budget."""
    if weights <= budget:
        return
    how = "measured" if measured else "estimated from config.json"
    raise EngineError(
        f"the memory budget of {budget / GB:.2f} GB is too small: the weights alone need "
        f"{weights / GB:.2f} GB ({how}), plus activations and KV cache; raise gpu_memory_gb "
        "(or gpu_memory_utilization), or load with quantization='int8'/'int4'"
    )


def plan_kv_blocks(
    *,
    budget: int,
    used: int,
    block_bytes: int,
    min_blocks: int,
    free_device_bytes: int | None = None,
) -> int:
    """Blocks that fit in `budget` after `used` bytes (weights + activations + graphs + sampler).

    `min_blocks` (one max_model_len sequence + the null block) must fit, else EngineError.
    `free_device_bytes` caps the result by what the device has free now (other processes).
    """
    margin = SAFETY_MARGIN_BYTES + int(SAFETY_MARGIN_FRACTION * budget)
    avail = budget - used - margin
    if free_device_bytes is not None:
        avail = min(avail, free_device_bytes - margin)
    blocks = max(0, avail // block_bytes)
    if blocks < min_blocks:
        need = used + margin + min_blocks * block_bytes
        raise EngineError(
            f"the memory budget of {budget / GB:.2f} GB leaves room for {blocks} KV blocks but one "
            f"max_model_len sequence needs {min_blocks}; about {need / GB:.2f} GB are needed "
            f"(weights + activations {used / GB:.2f} GB + KV {min_blocks * block_bytes / GB:.3f} GB). "
            "Raise gpu_memory_gb / gpu_memory_utilization, or lower max_model_len / max_num_batched_tokens"
        )
    return int(blocks)


def default_cpu_blocks(config: EngineConfig, block_bytes: int, cap_bytes: int = CPU_KV_CAP_BYTES) -> int:
    """CPU default: max_num_seqs full-length sequences, capped in bytes, never below one sequence."""
    per_seq = -(-config.max_model_len // config.block_size)
    wanted = config.max_num_seqs * per_seq
    capped = max(per_seq, cap_bytes // block_bytes)
    return min(wanted, capped) + 1  # + the null block


def param_bytes(model: torch.nn.Module) -> int:
    """Bytes of a model's parameters, storage shared between parameters counted once (the
    tied LM head and embedding are views of one tensor)."""
    seen: set[int] = set()
    total = 0
    for p in model.parameters():
        if p.data_ptr() not in seen:
            seen.add(p.data_ptr())
            total += p.numel() * p.element_size()
    return total
