"""ModelRunner: the model, its paged KV cache, persistent inputs and decode CUDA graphs.

`execute(StepBatch) -> logits [num_sampling_rows, vocab] float32` is the whole interface the
engine uses, plus `sampler` and `memory_report()`. Start-up on CUDA: load the weights
(measured), profile one forward at max_num_batched_tokens and one sampling pass at
max_num_seqs rows (activation peak), measure the graph pool by capturing the largest
bucket once over a temporary cache, size the KV cache from what is left of the budget
(memory.py), allocate it, then capture the decode graphs.
"""
from __future__ import annotations

import gc
import logging
from typing import Any

import torch

from hymt.engine import memory as mem
from hymt.engine.batch import ScheduledSeq, StepBatch
from hymt.engine.config import EngineConfig
from hymt.engine.cuda_graph import DecodeGraphs, graph_buckets
from hymt.engine.dtypes import kv_cache_dtype, kv_cache_dtype_name
from hymt.engine.input_buffers import InputBuffers
from hymt.engine.memory_report import MemoryReport
from hymt.engine.network.hunyuan_dense import allocate_kv_cache, kv_bytes_per_block
from hymt.engine.sampler import Sampler
from hymt.engine.sampling import SamplingParams
from hymt.engine.sequence import Sequence
from hymt.engine.step_inputs import StepLayout
from hymt.errors import EngineError

log = logging.getLogger(__name__)


class ModelRunner:
    """Runs steps of the native model on one device.

    Args:
        source: a hymt Checkpoint (weights loaded from it) or a config.json dict (with
            random_weights=True: real shapes, random values, for benchmarks).
        config: the engine configuration.
        device / dtype: where and in what precision the model runs.
        random_weights: skip reading weights.
        model: an already-built model meeting the model contract (tests); skips loading.
    """

    def __init__(
        self,
        source: Any,
        config: EngineConfig,
        *,
        device: torch.device,
        dtype: torch.dtype,
        random_weights: bool = False,
        model: Any = None,
    ):
        self.config = config
        self.device = torch.device(device)
        self.dtype = dtype
        self.is_cuda = self.device.type == "cuda"
        # Before loading the weights: an fp8 cache on a GPU without fp8 fails fast.
        self.kv_dtype = kv_cache_dtype(config.kv_cache_dtype, dtype, self.device)
        self.block_size = config.block_size
        self.max_cols = -(-config.max_model_len // config.block_size)
        self.budget_bytes = self._check_budget_before_load(getattr(source, "config", source))
        self.model = self._load_measured(source, random_weights, model)
        self.vocab_size = int(self.model.vocab_size)
        self.kv_block_bytes = kv_bytes_per_block(self.model, self.block_size, self.kv_dtype)
        max_tokens = max(config.max_num_batched_tokens, config.max_num_seqs)
        self.buffers = InputBuffers(max_tokens, config.max_num_seqs, self.max_cols, self.device)
        self.sampler = Sampler(self.vocab_size, config.max_num_seqs, self.device)
        self.graphs = DecodeGraphs()
        self._graph_layouts: dict[int, StepLayout] = {}
        self._graph_buckets = [] if (config.enforce_eager or not self.is_cuda) else graph_buckets(
            min(config.cuda_graph_max_bs, config.max_num_seqs)
        )
        # Graphs write their logits into one shared fp32 buffer (one per graph would cost
        # sum(buckets) x vocab x 4 bytes: ~5 GB for buckets up to 512).
        self._graph_logits = (
            torch.empty(self._graph_buckets[-1], self.vocab_size, dtype=torch.float32, device=self.device)
            if self._graph_buckets else None
        )
        self.activation_bytes = self._profile_activations() if self.is_cuda else 0
        self.graph_planned_bytes = self._measure_graph_pool(self._graph_buckets[-1]) if self._graph_buckets else 0
        self.num_kv_blocks = self._plan_blocks(self.budget_bytes, self.graph_planned_bytes)
        self.kv_caches = allocate_kv_cache(self.model, self.num_kv_blocks, self.block_size, self.kv_dtype, self.device)
        if self._graph_buckets:
            self._capture_graphs()
        self._log_memory()

    # -- start-up ---------------------------------------------------------------------------
    def _load_measured(self, source: Any, random_weights: bool, model: Any) -> Any:
        """Load (or take) the model; records weights_bytes and checks them against the budget."""
        if self.is_cuda:
            torch.cuda.reset_peak_memory_stats(self.device)
        before = self._allocated()
        model = model if model is not None else self._load(source, random_weights)
        self.weights_bytes = self._allocated() - before if self.is_cuda else _param_bytes(model)
        if self.budget_bytes is not None:
            mem.check_weights_fit(self.weights_bytes, self.budget_bytes, measured=True)
        return model

    def _capture_graphs(self) -> None:
        # torch.cuda.graph() runs gc.collect() per capture; freezing first keeps ~50
        # captures from walking every Python object each time.
        gc.collect()
        gc.freeze()
        with torch.inference_mode():
            self.graphs.capture(self._graph_buckets, self._prepare_dummy_decode, self._run_graph_body)

    def _log_memory(self) -> None:
        report = self.memory_report()
        log.info("KV cache: %d blocks of %d tokens (%d tokens)", self.num_kv_blocks, self.block_size,
                 report.kv_tokens)
        log.info(report.format())
        if report.budget_bytes is not None and report.peak_bytes > report.budget_bytes:
            log.warning("peak memory %.2f GB exceeds the budget of %.2f GB (graphs %.2f GB); lower "
                        "cuda_graph_max_bs or max_num_batched_tokens", report.peak_bytes / mem.GB,
                        report.budget_bytes / mem.GB, report.cuda_graph_bytes / mem.GB)

    def _load(self, source: Any, random_weights: bool) -> Any:
        from hymt.engine.loader import load_model

        try:
            return load_model(source, self.device, self.dtype, quantization=self.config.quantization,
                              random_weights=random_weights)
        except torch.cuda.OutOfMemoryError as e:
            raise EngineError(f"out of device memory while loading the weights on {self.device}: {e}") from e

    def _check_budget_before_load(self, model_config: dict) -> int | None:
        if not self.is_cuda:
            return None
        total = torch.cuda.get_device_properties(self.device).total_memory
        budget = mem.budget_bytes(self.config, total)
        if isinstance(model_config, dict) and "hidden_size" in model_config:
            estimate = mem.estimate_weight_bytes(model_config, self.dtype, self.config.quantization)
            mem.check_weights_fit(estimate, budget, measured=False)
        return budget

    def _allocated(self) -> int:
        return torch.cuda.memory_allocated(self.device) if self.is_cuda else 0

    def _plan_blocks(self, budget: int | None, graph_estimate: int) -> int:
        cfg = self.config
        min_blocks = -(-cfg.max_model_len // cfg.block_size) + 1
        if cfg.num_kv_blocks is not None:
            return max(cfg.num_kv_blocks, 2)
        if budget is None:
            return mem.default_cpu_blocks(cfg, self.kv_block_bytes)
        used = self._allocated() + self.activation_bytes + graph_estimate
        free, _ = torch.cuda.mem_get_info(self.device)
        reusable = torch.cuda.memory_reserved(self.device) - self._allocated()
        return mem.plan_kv_blocks(budget=budget, used=used, block_bytes=self.kv_block_bytes,
                                  min_blocks=min_blocks, free_device_bytes=free + reusable)

    def _profile_batch(self, num_tokens: int, num_seqs: int) -> StepBatch:
        """A prefill of num_tokens tokens over num_seqs sequences of up to max_model_len.

        Full-length sequences first, one-token sequences last, so the step has the longest
        attention spans and the most logits rows at once. Every long sequence writes the same
        blocks 1.. and every short one the null block: the values are garbage, the memory
        traffic is real, and the temporary cache stays one sequence long.
        """
        lens, left = [], num_tokens
        for i in range(num_seqs):
            take = min(self.config.max_model_len, left - (num_seqs - 1 - i))
            lens.append(take)
            left -= take
        table = list(range(1, 1 + -(-max(lens) // self.block_size)))
        return StepBatch([
            ScheduledSeq(i, [0] * n, 0, table if n > 1 else [0], True) for i, n in enumerate(lens)
        ])

    @torch.inference_mode()
    def _profile_activations(self) -> int:
        """Peak extra memory of the largest prefill step and a worst-case sampling pass."""
        cfg = self.config
        num_tokens = cfg.max_num_batched_tokens
        batch = self._profile_batch(num_tokens, min(cfg.max_num_seqs, num_tokens))
        cache_blocks = max(len(s.block_table) for s in batch.seqs) + 1
        self.kv_caches = allocate_kv_cache(self.model, cache_blocks, self.block_size, self.kv_dtype, self.device)
        torch.cuda.synchronize(self.device)
        torch.cuda.reset_peak_memory_stats(self.device)
        base = torch.cuda.memory_allocated(self.device)  # weights + buffers + the temporary cache
        logits = self._run_eager(batch)
        del logits
        # Sampling peaks at max_num_seqs rows (a full decode batch) with a full-vocabulary sort.
        self._profile_sampler(torch.randn(cfg.max_num_seqs, self.vocab_size, device=self.device))
        torch.cuda.synchronize(self.device)
        peak = torch.cuda.max_memory_allocated(self.device) - base
        self.kv_caches = []
        torch.cuda.empty_cache()
        return max(0, peak)

    def _profile_sampler(self, logits: torch.Tensor) -> None:
        params = SamplingParams(temperature=1.0, top_p=0.9, repetition_penalty=1.1, max_tokens=1)
        seqs = [Sequence(-1 - i, f"profile-{i}", [0], params) for i in range(logits.shape[0])]
        self.sampler.sample(logits, seqs)
        for s in seqs:
            self.sampler.release(s.seq_id)

    @torch.inference_mode()
    def _measure_graph_pool(self, bs: int) -> int:
        """The decode graphs' pool, planned before the KV cache exists (the graphs bake in its
        addresses, so the real capture must come after it): capture bucket `bs` once over a
        temporary two-block cache and read what its pool holds. The smaller buckets reuse
        those blocks; memory.GRAPH_POOL_SLACK covers what they cannot."""
        self.kv_caches = allocate_kv_cache(self.model, 2, self.block_size, self.kv_dtype, self.device)
        probe = DecodeGraphs()
        probe.capture([bs], self._prepare_dummy_decode, self._run_graph_body)
        pool = probe.pool_bytes
        probe.reset()
        self.kv_caches = []
        torch.cuda.empty_cache()
        return int(pool * mem.GRAPH_POOL_SLACK)

    def _prepare_dummy_decode(self, bs: int) -> None:
        layout = self.buffers.fill(StepBatch([ScheduledSeq(0, [0], 1, [0], True)]), self.block_size,
                                   pad_to=bs, num_cols=self.max_cols, max_seq_len=self.config.max_model_len)
        self.buffers.upload(layout)
        self._graph_layouts[bs] = layout

    def _run_graph_body(self, bs: int) -> torch.Tensor:
        layout = self._graph_layouts[bs]
        hidden = self.model.forward(self.buffers.input_ids(layout), self.buffers.metadata(layout), self.kv_caches)
        out = self._graph_logits[:bs]
        out.copy_(self.model.compute_logits(hidden))  # [bs, vocab] fp32; every decode row samples
        return out

    # -- steps ------------------------------------------------------------------------------
    @torch.inference_mode()
    def execute(self, batch: StepBatch) -> torch.Tensor:
        """Run one step; returns logits [num_sampling_rows, vocab] float32 on the device."""
        return self.run(self.prepare(batch))

    def prepare(
        self,
        batch: StepBatch,
        *,
        deferred: tuple[list[int], list[int]] = ((), ()),
        prev_tokens: torch.Tensor | None = None,
    ) -> tuple[StepLayout, int | None]:
        """Fill and upload the step's inputs; returns the layout and the graph bucket (None = eager).

        deferred = (dst, src): input tokens not known on the host, taken on the device from
        `prev_tokens` (the previous step's sampled ids): input_ids[dst[i]] = prev_tokens[src[i]].
        """
        buffers = self.buffers
        buffers.flip()
        n = len(batch.seqs)
        bs = None
        if self.graphs.buckets and n <= self.graphs.buckets[-1] and _decode_all_sample(batch):
            bs = self.graphs.bucket_for(n)
            layout = buffers.fill(batch, self.block_size, pad_to=bs, num_cols=self.max_cols,
                                  max_seq_len=self.config.max_model_len)
        else:
            layout = buffers.fill(batch, self.block_size)
        buffers.upload(layout)
        if deferred[0]:
            buffers.patch_deferred(list(deferred[0]), list(deferred[1]), prev_tokens)
        return layout, bs

    @torch.inference_mode()
    def run(self, prepared: tuple[StepLayout, int | None]) -> torch.Tensor:
        """Forward a prepared step -> logits [num_sampling_rows, vocab] float32."""
        layout, bs = prepared
        if bs is not None:
            return self.graphs.replay(bs)[: layout.num_real_seqs]
        return self._forward_eager(layout)

    def _run_eager(self, batch: StepBatch) -> torch.Tensor:
        layout = self.buffers.fill(batch, self.block_size)
        self.buffers.upload(layout)
        return self._forward_eager(layout)

    def _forward_eager(self, layout: StepLayout) -> torch.Tensor:
        meta = self.buffers.metadata(layout)
        hidden = self.model.forward(self.buffers.input_ids(layout), meta, self.kv_caches)  # [T, H]
        if layout.num_sample == 0:
            return hidden.new_empty((0, self.vocab_size), dtype=torch.float32)
        if layout.num_sample < layout.num_tokens:
            hidden = hidden.index_select(0, meta.logits_indices)
        return self.model.compute_logits(hidden)  # [num_sample, vocab]

    # -- reporting --------------------------------------------------------------------------
    def memory_report(self) -> MemoryReport:
        kv_bytes = self.num_kv_blocks * self.kv_block_bytes
        if self.is_cuda:
            total = torch.cuda.get_device_properties(self.device).total_memory
            peak = torch.cuda.max_memory_reserved(self.device)
        else:
            total, peak = 0, self.weights_bytes + kv_bytes + self.sampler.state_bytes
        return MemoryReport(
            device=str(self.device),
            budget_bytes=self.budget_bytes if self.config.num_kv_blocks is None else None,
            device_total_bytes=total,
            weights_bytes=self.weights_bytes,
            kv_cache_bytes=kv_bytes,
            num_kv_blocks=self.num_kv_blocks,
            kv_block_bytes=self.kv_block_bytes,
            block_size=self.block_size,
            activation_bytes=self.activation_bytes,
            cuda_graph_bytes=self.graphs.pool_bytes,
            cuda_graph_planned_bytes=self.graph_planned_bytes,
            sampler_bytes=self.sampler.state_bytes,
            peak_bytes=peak,
            kv_cache_dtype=kv_cache_dtype_name(self.kv_dtype),
        )

    def close(self) -> None:
        """Drop every device tensor (model, KV, graphs, buffers, sampler state) by reference."""
        self.graphs.reset()
        self.kv_caches = []
        self.model = None
        self._graph_logits = None
        self.buffers = None
        self.sampler = None
        if self.is_cuda:
            torch.cuda.empty_cache()


def _decode_all_sample(batch: StepBatch) -> bool:
    for s in batch.seqs:
        if len(s.token_ids) != 1 or s.start_pos == 0 or not s.sample:
            return False
    return True


def _param_bytes(model: Any) -> int:
    params = getattr(model, "parameters", None)
    if params is None:
        return 0
    seen, total = set(), 0
    for p in params():
        if p.data_ptr() not in seen:
            seen.add(p.data_ptr())
            total += p.numel() * p.element_size()
    return total
