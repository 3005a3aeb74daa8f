"""ModelRunner: a loaded native model, its paged KV cache, persistent inputs and CUDA graphs.

The engine's contract with the runner is one pair of calls per step (tests make the same two):

    prepared = runner.prepare(batch, deferred_dst=..., deferred_src=..., prev_tokens=...)
    logits = runner.run(prepared)         # [num_sampling_rows, vocab] float32, on the device

`prepare` fills and uploads the step's inputs and picks a graph (cuda_graph.py: a decode
graph by batch size, else a step graph by token count); `run` replays it or runs the model
eagerly. With overlap the engine prepares step n+1 while step n
computes, patching in the inputs only step n's sampled ids will hold (`deferred_*`).

Start-up, in native_engine.start_model_runner: the runner is built over the loaded model
without a KV cache; the memory planner measures through it (`temporary_kv_cache`,
`forward_eager`, `measure_graph_pool`); `allocate(plan)` then creates the cache the plan
sized and captures the graphs.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import torch

from hymt.engine.attention_metadata import prefill_item_bound
from hymt.engine.batch import ScheduledSeq, StepBatch
from hymt.engine.config import EngineConfig
from hymt.engine.cuda_graph import StepGraphs
from hymt.engine.input_buffers import InputBuffers
from hymt.engine.memory_planner import MemoryPlan
from hymt.engine.network.hunyuan_dense import HunyuanDenseForCausalLM, KVCache, allocate_kv_cache
from hymt.engine.step_inputs import StepLayout
from hymt.engine.step_kinds import StepKindCounter
from hymt.errors import EngineError
from hymt.gc_tuning import freeze_heap


@dataclass(frozen=True)
class PreparedStep:
    """A step whose inputs are on the device: their layout, and the graph that runs it.

    graph_bucket: the decode graph's batch size; token_bucket: the step graph's token count;
    both None: eager.
    """

    layout: StepLayout
    graph_bucket: int | None
    token_bucket: int | None = None


class ModelRunner:
    """Runs steps of `model` on its device (module docstring).

    Args:
        model: the loaded model (hymt.engine.loader.load_model).
        config: the engine configuration (step sizes, block size, max_model_len).
    """

    def __init__(self, model: HunyuanDenseForCausalLM, config: EngineConfig):
        self.model = model
        self.config = config
        self.device = model.device
        self.block_size = config.block_size
        self.max_cols = -(-config.max_model_len // config.block_size)
        max_tokens = max(config.max_num_batched_tokens, config.max_num_seqs)
        self.buffers = InputBuffers(max_tokens, config.max_num_seqs, self.max_cols, self.device)
        self.graphs = StepGraphs("decode")
        self.token_graphs = StepGraphs("step")
        self.kv_caches: list[KVCache] = []
        self.step_kinds = StepKindCounter()  # the steps `prepare` laid out, by graph or eager
        self._graph_layouts: dict[int, StepLayout] = {}
        self._token_graph_layouts: dict[int, StepLayout] = {}
        # Graphs write their logits into one shared fp32 buffer (one per graph would cost
        # sum(buckets) x vocab x 4 bytes: ~5 GB for buckets up to 512).
        self._graph_logits: torch.Tensor | None = None

    @property
    def vocab_size(self) -> int:
        return int(self.model.vocab_size)

    @property
    def graph_pool_bytes(self) -> int:
        """What the captured graphs' shared pool holds."""
        return self.graphs.pool_bytes + self.token_graphs.pool_bytes

    # -- start-up ---------------------------------------------------------------------------
    @contextmanager
    def temporary_kv_cache(self, num_blocks: int, dtype: torch.dtype) -> Iterator[None]:
        """A cache of `num_blocks` for measurements before the real one exists; freed on exit."""
        self.kv_caches = allocate_kv_cache(self.model, num_blocks, self.block_size, dtype, self.device)
        try:
            yield
        finally:
            self.kv_caches = []
            if self.device.type == "cuda":
                torch.cuda.empty_cache()

    def forward_eager(self, batch: StepBatch) -> torch.Tensor:
        """`batch` through the model without graphs -> logits [num_sampling_rows, vocab] fp32."""
        layout = self.buffers.fill(batch, self.block_size)
        self.buffers.upload(layout)
        return self._forward_eager(layout)

    def measure_graph_pool(self, batch_size: int | None, num_tokens: int | None) -> int:
        """Bytes the decode graph of `batch_size` rows and the step graph of `num_tokens` tokens
        hold in their shared pool (captured, then dropped); None skips a kind."""
        pool = torch.cuda.graph_pool_handle()
        probes = []
        if num_tokens is not None:
            probe = StepGraphs("step")
            probe.capture([num_tokens], self._prepare_dummy_tokens, self._run_token_graph_body, pool)
            probes.append(probe)
        if batch_size is not None:
            self._reserve_graph_logits(batch_size)  # before the capture, so the pool does not count it
            probe = StepGraphs("decode")
            probe.capture([batch_size], self._prepare_dummy_decode, self._run_graph_body, pool)
            probes.append(probe)
        total = sum(p.pool_bytes for p in probes)
        for p in probes:
            p.reset()
        return total

    def allocate(self, plan: MemoryPlan) -> None:
        """Create the KV cache the plan sized, then capture its graphs (they bake in its addresses)."""
        self.kv_caches = allocate_kv_cache(self.model, plan.num_kv_blocks, self.block_size, plan.kv_dtype,
                                           self.device)
        if plan.graph_buckets or plan.token_graph_buckets:
            freeze_heap()  # ~60 captures, each running gc.collect()
            pool = torch.cuda.graph_pool_handle()
            with torch.inference_mode():
                if plan.token_graph_buckets:
                    self.token_graphs.capture(list(plan.token_graph_buckets), self._prepare_dummy_tokens,
                                              self._run_token_graph_body, pool)
                if plan.graph_buckets:
                    self._reserve_graph_logits(max(plan.graph_buckets))
                    self.graphs.capture(list(plan.graph_buckets), self._prepare_dummy_decode, self._run_graph_body,
                                        pool)

    def _prepare_dummy_decode(self, bs: int) -> None:
        layout = self.buffers.fill(StepBatch([ScheduledSeq(0, [0], 1, [0], True)]), self.block_size,
                                   pad_to=bs, num_cols=self.max_cols, max_seq_len=self.config.max_model_len)
        self.buffers.upload(layout)
        self._graph_layouts[bs] = layout

    def _prepare_dummy_tokens(self, num_tokens: int) -> None:
        """One sequence of num_tokens - 1 tokens over the null block, and the padding sequence."""
        cols = -(-num_tokens // self.block_size)
        batch = StepBatch([ScheduledSeq(0, [0] * (num_tokens - 1), 0, [0] * cols, True)])
        layout = self._fill_token_graph(batch, num_tokens)
        self.buffers.upload(layout)
        self._token_graph_layouts[num_tokens] = layout

    def _fill_token_graph(self, batch: StepBatch, num_tokens: int) -> StepLayout:
        """`batch` in the layout of the step graph of `num_tokens` tokens: padded tokens, a
        work list padded to the most items such a step can need, full-width block tables."""
        items = prefill_item_bound(num_tokens, min(num_tokens, self.config.max_num_seqs + 1))
        return self.buffers.fill(batch, self.block_size, pad_tokens_to=num_tokens, pad_items_to=items,
                                 num_cols=self.max_cols, max_seq_len=self.config.max_model_len)

    def _run_token_graph_body(self, num_tokens: int) -> torch.Tensor:
        return self._forward_hidden(self._token_graph_layouts[num_tokens])  # [num_tokens, hidden]

    def _reserve_graph_logits(self, rows: int) -> None:
        if self._graph_logits is None or self._graph_logits.shape[0] < rows:
            self._graph_logits = torch.empty(rows, self.vocab_size, dtype=torch.float32, device=self.device)

    def _run_graph_body(self, bs: int) -> torch.Tensor:
        assert self._graph_logits is not None  # reserved before every capture
        hidden = self._forward_hidden(self._graph_layouts[bs])
        out = self._graph_logits[:bs]
        out.copy_(self.model.compute_logits(hidden))  # [bs, vocab] fp32; every decode row samples
        return out

    # -- steps ------------------------------------------------------------------------------
    def prepare(
        self,
        batch: StepBatch,
        *,
        deferred_dst: Sequence[int] = (),
        deferred_src: Sequence[int] = (),
        prev_tokens: torch.Tensor | None = None,
    ) -> PreparedStep:
        """Fill and upload the step's inputs, in the graph bucket's layout when one fits.

        deferred_dst / deferred_src: input tokens the host has not seen, taken on the device from
        `prev_tokens` (the previous step's sampled ids): input_ids[dst[i]] = prev_tokens[src[i]].
        """
        if not self.kv_caches:
            raise EngineError("the model runner has no KV cache: allocate(plan) comes first")
        buffers = self.buffers
        buffers.flip()
        n = len(batch.seqs)
        bucket = token_bucket = None
        if self.graphs.buckets and n <= self.graphs.buckets[-1] and _decode_all_sample(batch):
            bucket = self.graphs.bucket_for(n)
            layout = buffers.fill(batch, self.block_size, pad_to=bucket, num_cols=self.max_cols,
                                  max_seq_len=self.config.max_model_len)
        elif self.token_graphs.buckets and (token_bucket := self.token_graphs.bucket_for(batch.num_tokens)):
            layout = self._fill_token_graph(batch, token_bucket)
        else:
            layout = buffers.fill(batch, self.block_size)
        buffers.upload(layout)
        if deferred_dst:
            if prev_tokens is None:
                raise ValueError("deferred inputs need prev_tokens, the previous step's sampled ids")
            buffers.patch_deferred(list(deferred_dst), list(deferred_src), prev_tokens)
        self.step_kinds.record(decode_bucket=bucket, token_bucket=token_bucket, num_tokens=batch.num_tokens)
        return PreparedStep(layout, bucket, token_bucket)

    @torch.inference_mode()
    def run(self, prepared: PreparedStep) -> torch.Tensor:
        """Forward a prepared step -> logits [num_sampling_rows, vocab] float32."""
        if prepared.graph_bucket is not None:
            return self.graphs.replay(prepared.graph_bucket)[: prepared.layout.num_real_seqs]
        if prepared.token_bucket is not None:
            hidden = self.token_graphs.replay(prepared.token_bucket)  # [bucket, hidden]
            return self._logits(hidden, prepared.layout)
        return self._forward_eager(prepared.layout)

    @torch.inference_mode()
    def _forward_eager(self, layout: StepLayout) -> torch.Tensor:
        return self._logits(self._forward_hidden(layout), layout)

    def _forward_hidden(self, layout: StepLayout) -> torch.Tensor:
        """The model over the buffers' step of `layout` -> final hidden states [T, hidden]."""
        return self.model.forward(self.buffers.input_ids(layout), self.buffers.metadata(layout), self.kv_caches)

    def _logits(self, hidden: torch.Tensor, layout: StepLayout) -> torch.Tensor:
        """hidden [T, H] of a step -> logits [num_sample, vocab] fp32 of its sampling rows."""
        if layout.num_sample == 0:
            return hidden.new_empty((0, self.vocab_size), dtype=torch.float32)
        if layout.num_sample < layout.num_tokens:
            hidden = hidden.index_select(0, self.buffers.logits_indices(layout))
        return self.model.compute_logits(hidden)  # [num_sample, vocab]

    def close(self) -> None:
        """Drop every device tensor (model, KV, graphs, buffers) by reference."""
        self.graphs.reset()
        self.token_graphs.reset()
        self.kv_caches = []
        del self.model, self.buffers
        self._graph_logits = None
        if self.device.type == "cuda":
            torch.cuda.empty_cache()


def _decode_all_sample(batch: StepBatch) -> bool:
    for s in batch.seqs:
        if len(s.token_ids) != 1 or s.start_pos == 0 or not s.sample:
            return False
    return True
