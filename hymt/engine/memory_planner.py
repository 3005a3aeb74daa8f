"""MemoryPlanner: how one native engine spends its device memory, decided once at start-up.

In start-up order (NativeEngine runs them through native_engine.start_model_runner):

1. `MemoryPlanner(config, model_config, device, dtype)`, before any weight is loaded: the
   budget (memory.budget_bytes), the KV-cache dtype (an fp8 cache on a GPU without fp8 fails
   here), the weights estimated from config.json checked against the budget, the step sizes
   fitted to a small budget (`planner.config`) and the sizes to capture as CUDA graphs
   (`planner.graph_buckets`: decode batch sizes; `planner.token_graph_buckets`: token counts
   of other steps).
2. `planner.load_weights(load)`: runs the load, measures what the weights took and checks it.
3. `planner.plan(runner, sampler) -> MemoryPlan`: on CUDA, the activation peak of the
   largest step plus a worst-case sampling pass, the graphs' pool (the largest bucket of each
   kind captured once over a temporary cache), and the KV blocks that fit in what is left
   (memory.plan_kv_blocks). The runner then allocates exactly that (ModelRunner.allocate).

On CPU nothing is measured: the cache is config.num_kv_blocks, or memory.default_cpu_blocks.
All CUDA figures are what torch's caching allocator holds (the CUDA context is outside it).
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import torch

from hymt.engine.batch import ScheduledSeq, StepBatch
from hymt.engine.config import EngineConfig
from hymt.engine.cuda_graph import graph_buckets, token_graph_buckets
from hymt.engine.dtypes import kv_cache_dtype, kv_cache_dtype_name
from hymt.engine.memory import (
    GRAPH_POOL_SLACK,
    budget_bytes,
    check_weights_fit,
    default_cpu_blocks,
    estimate_weight_bytes,
    fit_config_to_budget,
    param_bytes,
    plan_kv_blocks,
)
from hymt.engine.memory_report import GB, MemoryReport
from hymt.engine.network.hunyuan_dense import kv_bytes_per_block
from hymt.engine.sampling import SamplingParams
from hymt.engine.sequence import Sequence
from hymt.errors import EngineError

if TYPE_CHECKING:
    from hymt.engine.sampler import Sampler

log = logging.getLogger(__name__)

Model = TypeVar("Model", bound=torch.nn.Module)


@dataclass(frozen=True)
class MemoryPlan:
    """What the model runner allocates, with the figures it was sized from.

    Attributes:
        device: where everything lives.
        budget_bytes: the budget the KV cache was sized from; None on CPU or when
            config.num_kv_blocks fixed the cache.
        weights_bytes: the loaded weights (measured on CUDA; parameter bytes on CPU).
        activation_bytes: peak extra memory of the largest step and a sampling pass (0 on CPU).
        graph_buckets: decode batch sizes captured as CUDA graphs (empty: eager only).
        token_graph_buckets: token counts of the other steps captured as CUDA graphs.
        graph_pool_bytes: what the KV sizing set aside for the graphs' pool.
        kv_dtype: the paged cache's element type.
        block_size: tokens per KV block.
        kv_block_bytes: K and V of one block over all layers.
        num_kv_blocks: blocks of the paged cache, the null block included.
    """

    device: torch.device
    budget_bytes: int | None
    weights_bytes: int
    activation_bytes: int
    graph_buckets: tuple[int, ...]
    token_graph_buckets: tuple[int, ...]
    graph_pool_bytes: int
    kv_dtype: torch.dtype
    block_size: int
    kv_block_bytes: int
    num_kv_blocks: int

    def report(self, *, cuda_graph_bytes: int, sampler_bytes: int) -> MemoryReport:
        """The plan with what the graphs and the sampler hold, and the allocator's peak so far."""
        kv_bytes = self.num_kv_blocks * self.kv_block_bytes
        if self.device.type == "cuda":
            total = torch.cuda.get_device_properties(self.device).total_memory
            peak = torch.cuda.max_memory_reserved(self.device)
        else:
            total, peak = 0, self.weights_bytes + kv_bytes + sampler_bytes
        return MemoryReport(
            device=str(self.device), budget_bytes=self.budget_bytes, device_total_bytes=total,
            weights_bytes=self.weights_bytes, kv_cache_bytes=kv_bytes, num_kv_blocks=self.num_kv_blocks,
            kv_block_bytes=self.kv_block_bytes, block_size=self.block_size, activation_bytes=self.activation_bytes,
            cuda_graph_bytes=cuda_graph_bytes, cuda_graph_planned_bytes=self.graph_pool_bytes,
            sampler_bytes=sampler_bytes, peak_bytes=peak, kv_cache_dtype=kv_cache_dtype_name(self.kv_dtype),
        )


class ProfilingRunner(Protocol):
    """What the planner runs through the model runner before the KV cache exists."""

    @property
    def vocab_size(self) -> int: ...

    def temporary_kv_cache(self, num_blocks: int, dtype: torch.dtype) -> AbstractContextManager[None]: ...

    def forward_eager(self, batch: StepBatch) -> torch.Tensor: ...

    def measure_graph_pool(self, batch_size: int | None, num_tokens: int | None) -> int: ...


class MemoryPlanner:
    """Budget, weights, activation profile, graph pool and KV block count (module docstring)."""

    def __init__(self, config: EngineConfig, model_config: dict[str, Any], device: torch.device,
                 dtype: torch.dtype):
        self.device = device
        self.is_cuda = device.type == "cuda"
        self.model_config = model_config
        self.kv_dtype = kv_cache_dtype(config.kv_cache_dtype, dtype, device)
        self.budget_bytes: int | None = None
        if self.is_cuda:
            self.budget_bytes = budget_bytes(config, torch.cuda.get_device_properties(device).total_memory)
            estimate = estimate_weight_bytes(model_config, dtype, config.quantization)
            check_weights_fit(estimate, self.budget_bytes, measured=False)
            if config.num_kv_blocks is None:
                config = _fitted(config, self.budget_bytes, estimate)
        self.config = config
        eager = config.enforce_eager or not self.is_cuda
        self.graph_buckets: tuple[int, ...] = () if eager else tuple(
            graph_buckets(min(config.cuda_graph_max_bs, config.max_num_seqs))
        )
        self.token_graph_buckets: tuple[int, ...] = () if eager else tuple(token_graph_buckets(
            min(config.cuda_graph_max_tokens, config.max_num_batched_tokens, config.max_model_len)))
        self.weights_bytes: int | None = None

    def load_weights(self, load: Callable[[], Model]) -> Model:
        """Run `load`, record what the weights take on the device, and check it against the budget."""
        if self.is_cuda:
            torch.cuda.reset_peak_memory_stats(self.device)
        before = self._allocated()
        try:
            model = load()
        except torch.cuda.OutOfMemoryError as e:
            raise EngineError(f"out of device memory while loading the weights on {self.device}: {e}") from e
        self.weights_bytes = self._allocated() - before if self.is_cuda else param_bytes(model)
        if self.budget_bytes is not None:
            check_weights_fit(self.weights_bytes, self.budget_bytes, measured=True)
        return model

    def plan(self, runner: ProfilingRunner, sampler: Sampler) -> MemoryPlan:
        """Measure what a step needs and size the KV cache from what is left (module docstring)."""
        if self.weights_bytes is None:
            raise EngineError("MemoryPlanner.plan() needs the weights loaded through load_weights() first")
        cfg = self.config
        block_bytes = kv_bytes_per_block(self.model_config, cfg.block_size, self.kv_dtype)
        activation = graph_pool = 0
        if not self.is_cuda:
            blocks = default_cpu_blocks(cfg, block_bytes) if cfg.num_kv_blocks is None else max(cfg.num_kv_blocks, 2)
        else:
            activation = self._profile_activations(runner, sampler)
            graph_pool = self._measure_graph_pool(runner) if self.graph_buckets or self.token_graph_buckets else 0
            blocks = self._kv_blocks(activation + graph_pool, block_bytes)
        budget = self.budget_bytes if cfg.num_kv_blocks is None else None
        return MemoryPlan(self.device, budget, self.weights_bytes, activation, self.graph_buckets,
                          self.token_graph_buckets, graph_pool, self.kv_dtype, cfg.block_size, block_bytes, blocks)

    # -- measurements (CUDA) ----------------------------------------------------------------
    @torch.inference_mode()
    def _profile_activations(self, runner: ProfilingRunner, sampler: Sampler) -> int:
        """Peak extra memory of the largest prefill step and a worst-case sampling pass."""
        cfg = self.config
        batch = profile_batch(cfg.max_num_batched_tokens, min(cfg.max_num_seqs, cfg.max_num_batched_tokens),
                              cfg.max_model_len, cfg.block_size)
        cache_blocks = max(len(s.block_table) for s in batch.seqs) + 1
        with runner.temporary_kv_cache(cache_blocks, self.kv_dtype):
            torch.cuda.synchronize(self.device)
            torch.cuda.reset_peak_memory_stats(self.device)
            base = torch.cuda.memory_allocated(self.device)  # weights + buffers + the temporary cache
            logits = runner.forward_eager(batch)
            del logits
            # Sampling peaks at max_num_seqs rows (a full decode batch) with a full-vocabulary sort.
            _profile_sampler(sampler, torch.randn(cfg.max_num_seqs, runner.vocab_size, device=self.device))
            torch.cuda.synchronize(self.device)
            peak = torch.cuda.max_memory_allocated(self.device) - base
        return max(0, peak)

    @torch.inference_mode()
    def _measure_graph_pool(self, runner: ProfilingRunner) -> int:
        """The graphs' pool, planned before the KV cache exists (the graphs bake in its
        addresses, so the real capture must come after it): the largest bucket of each kind
        captured once into one pool over a temporary cache. The smaller buckets reuse its
        blocks; GRAPH_POOL_SLACK covers what they cannot."""
        tokens = self.token_graph_buckets[-1] if self.token_graph_buckets else None
        batch = self.graph_buckets[-1] if self.graph_buckets else None
        with runner.temporary_kv_cache(2, self.kv_dtype):
            try:
                pool = runner.measure_graph_pool(batch, tokens)
            except RuntimeError as exc:
                if tokens is None:
                    raise
                # The step graphs are the newer capture (prefills of up to thousands of tokens
                # through every layer kind); a kernel that cannot be captured there costs their
                # speed, never the engine.
                log.warning("steps with prefill tokens will run eagerly: their CUDA graph could not be "
                            "captured (%s)", exc)
                self.token_graph_buckets = ()
                pool = runner.measure_graph_pool(batch, None) if batch is not None else 0
        return int(pool * GRAPH_POOL_SLACK)

    def _kv_blocks(self, set_aside: int, block_bytes: int) -> int:
        cfg = self.config
        if cfg.num_kv_blocks is not None:
            return max(cfg.num_kv_blocks, 2)
        assert self.budget_bytes is not None  # set on CUDA
        allocated = self._allocated()
        free, _ = torch.cuda.mem_get_info(self.device)
        reusable = torch.cuda.memory_reserved(self.device) - allocated
        min_blocks = -(-cfg.max_model_len // cfg.block_size) + 1  # one full-length sequence + the null block
        return plan_kv_blocks(budget=self.budget_bytes, used=allocated + set_aside, block_bytes=block_bytes,
                              min_blocks=min_blocks, free_device_bytes=free + reusable)

    def _allocated(self) -> int:
        return torch.cuda.memory_allocated(self.device) if self.is_cuda else 0


def profile_batch(num_tokens: int, num_seqs: int, max_model_len: int, block_size: int) -> StepBatch:
    """A prefill of num_tokens tokens over num_seqs sequences of up to max_model_len.

    Full-length sequences first, one-token sequences last, so the step has the longest
    attention spans and the most logits rows at once. Every long sequence writes the same
    blocks 1.. and every short one the null block: the values are garbage, the memory
    traffic is real, and the temporary cache stays one sequence long.
    """
    lens: list[int] = []
    left = num_tokens
    for i in range(num_seqs):
        take = min(max_model_len, left - (num_seqs - 1 - i))
        lens.append(take)
        left -= take
    table = list(range(1, 1 + -(-max(lens) // block_size)))
    return StepBatch([ScheduledSeq(i, [0] * n, 0, table if n > 1 else [0], True) for i, n in enumerate(lens)])


def _profile_sampler(sampler: Sampler, logits: torch.Tensor) -> None:
    """Sample every row with penalties, temperature and top-p on: the sampler's largest pass."""
    params = SamplingParams(temperature=1.0, top_p=0.9, repetition_penalty=1.1, max_tokens=1)
    seqs = [Sequence(-1 - i, f"profile-{i}", [0], params) for i in range(logits.shape[0])]
    sampler.sample(logits, seqs)
    for s in seqs:
        sampler.release(s.seq_id)


def _fitted(config: EngineConfig, budget: int, weight_estimate: int) -> EngineConfig:
    """Smaller step sizes under a small budget (memory.fit_config_to_budget), logged."""
    fitted = fit_config_to_budget(config, budget, weight_estimate)
    if fitted != config:
        log.info("small memory budget (%.2f GB for %.2f GB of weights): max_num_batched_tokens %d, "
                 "max_num_seqs %d, cuda_graph_max_bs %d", budget / GB, weight_estimate / GB,
                 fitted.max_num_batched_tokens, fitted.max_num_seqs, fitted.cuda_graph_max_bs)
    return fitted


def log_memory(report: MemoryReport) -> None:
    """The start-up memory lines, with a warning when the peak went past the budget."""
    log.info("KV cache: %d blocks of %d tokens (%d tokens)", report.num_kv_blocks, report.block_size,
             report.kv_tokens)
    log.info(report.format())
    if report.budget_bytes is not None and report.peak_bytes > report.budget_bytes:
        log.warning("peak memory %.2f GB exceeds the budget of %.2f GB (graphs %.2f GB); lower "
                    "cuda_graph_max_bs or max_num_batched_tokens", report.peak_bytes / GB,
                    report.budget_bytes / GB, report.cuda_graph_bytes / GB)
