"""NativeEngine: hymt's own engine behind the `Engine` interface.

One `step()` = schedule (scheduler.py) -> fill inputs + forward (model_runner.py) -> sample
(sampler.py; the step's only device->host copy is the sampled ids) -> apply (scheduler.update)
-> one RequestOutput per request that got a token or finished.

Overlap (default on CUDA): step n is launched before step n-1's sampled ids are read, so
the host applies n-1's results, builds its outputs and plans n+1 while the GPU computes n.
Decode inputs the host has not seen come from n-1's device tensor; a request that hits a stop
token at n-1 has one wasted token computed at n; `step()` returns the outputs of the step
before the one it launches, and `has_unfinished()` stays True until the last is read.
EngineConfig.overlap (HYMT_OVERLAP) turns it on or off.
"""
from __future__ import annotations

import functools
import itertools
import logging
import random
import time
from collections.abc import Sequence as Seq
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from hymt.engine.block_manager import BlockManager
from hymt.engine.config import EngineConfig, with_env_overrides
from hymt.engine.devices import resolve_device
from hymt.engine.dtypes import resolve_dtype
from hymt.engine.interface import Engine, EngineStats
from hymt.engine.layers.kernel_choice import set_triton_disabled
from hymt.engine.loader import load_model
from hymt.engine.memory_planner import MemoryPlan, MemoryPlanner, log_memory
from hymt.engine.memory_report import MemoryReport
from hymt.engine.model_runner import ModelRunner
from hymt.engine.outputs import RequestOutput
from hymt.engine.sampler import Sampler
from hymt.engine.sampling import SamplingParams
from hymt.engine.scheduler import Scheduler, SchedulerOutput
from hymt.engine.sequence import Sequence
from hymt.engine.step_timer import StepTimer
from hymt.errors import EngineError, InvalidInputError
from hymt.gc_tuning import tune_collector, untune_collector

if TYPE_CHECKING:
    from hymt.checkpoint import Checkpoint, CheckpointSource

logger = logging.getLogger(__name__)


def _eos_ids(model_config: dict) -> tuple[int, ...]:
    eos = model_config.get("eos_token_id")
    if eos is None:
        return ()
    return tuple(int(e) for e in (eos if isinstance(eos, (list, tuple)) else [eos]))


@dataclass(frozen=True)
class StartedModel:
    """A model on its device, ready to step: the runner, the engine's sampler, the memory plan
    they were sized by, and the config after the plan fitted it to the budget."""

    config: EngineConfig
    runner: ModelRunner
    sampler: Sampler
    plan: MemoryPlan


def start_model_runner(source: Checkpoint | dict[str, Any], config: EngineConfig, *, device: torch.device,
                       dtype: torch.dtype, random_weights: bool = False) -> StartedModel:
    """Load the model and lay out its device memory (memory_planner.py, in start-up order).

    source: a Checkpoint, or a config.json dict with random_weights=True.
    """
    model_config = source if isinstance(source, dict) else source.config
    planner = MemoryPlanner(config, model_config, device, dtype)
    config = planner.config
    model = planner.load_weights(functools.partial(load_model, source, device, dtype,
                                                   quantization=config.quantization, random_weights=random_weights))
    runner = ModelRunner(model, config)
    sampler = Sampler(runner.vocab_size, config.max_num_seqs, device)
    plan = planner.plan(runner, sampler)
    runner.allocate(plan)
    started = StartedModel(config, runner, sampler, plan)
    log_memory(plan.report(cuda_graph_bytes=runner.graph_pool_bytes, sampler_bytes=sampler.state_bytes))
    return started


@dataclass
class _InFlight:
    """A launched step: its plan, sampled ids on the device, their host copy and its event."""

    plan: SchedulerOutput
    tokens: torch.Tensor | None  # [num_sample] int64 on the device
    host: torch.Tensor | None  # the same ids in (pinned) host memory, valid after `event`
    event: torch.cuda.Event | None


class NativeEngine(Engine):
    """The native engine on one device.

    Args:
        model: a `hymt.checkpoint.Checkpoint`, a local dir / hub id (loaded with
            hymt.checkpoint), or a config.json dict (then `random_weights=True`).
        config: engine knobs; default EngineConfig().
        device / dtype: default CUDA + bfloat16 when available, else CPU + float32.
        random_weights: real shapes, random values (benchmarks).
        stop_token_ids: ids ending every request by default; default the checkpoint's eos ids.

    The environment overrides some config fields (config.with_env_overrides); `config` is
    the engine's configuration after them.
    """

    def __init__(
        self,
        model: CheckpointSource | dict[str, Any],
        config: EngineConfig | None = None,
        *,
        device: str | torch.device | None = None,
        dtype: str | torch.dtype | None = None,
        random_weights: bool = False,
        stop_token_ids: Seq[int] | None = None,
    ):
        if not isinstance(model, dict):
            from hymt.checkpoint import load_checkpoint

            model = load_checkpoint(model)
        self.checkpoint = None if isinstance(model, dict) else model
        model_config = model if isinstance(model, dict) else model.config
        config = with_env_overrides(config or EngineConfig())
        self.device = resolve_device(device)
        self.dtype = resolve_dtype(dtype, self.device)
        self._triton_was_disabled = set_triton_disabled(config.disable_triton)
        try:
            started = start_model_runner(model, config, device=self.device, dtype=self.dtype,
                                         random_weights=random_weights)
        except BaseException:
            set_triton_disabled(self._triton_was_disabled)  # no engine holds the setting
            raise
        self.config, self.runner, self.plan = started.config, started.runner, started.plan
        self.sampler: Sampler | None = started.sampler  # the engine's: the runner only computes logits
        self.vocab_size = self.runner.vocab_size
        self.block_manager = BlockManager(self.plan.num_kv_blocks, self.config.block_size,
                                          enable_prefix_caching=self.config.enable_prefix_caching)
        self.scheduler = Scheduler(self.config, self.block_manager)
        if stop_token_ids is None:
            stop_token_ids = getattr(self.checkpoint, "eos_token_ids", None) or _eos_ids(model_config)
        self.stop_token_ids = tuple(int(t) for t in stop_token_ids)
        self._rng = random.Random(self.config.seed)
        self._seq_ids = itertools.count()
        self._req_ids = itertools.count()
        self._aborted: list[RequestOutput] = []
        self.timer = StepTimer(self.device, mode=self.config.step_profile)
        overlap = self.config.overlap
        self.overlap = self.device.type == "cuda" if overlap is None else overlap
        self._inflight: _InFlight | None = None
        # Sampled ids come back through pinned memory, alternating between two buffers: the
        # one of step n-1 is read while step n's copy may be pending.
        pin = self.device.type == "cuda"
        self._token_host = [torch.zeros(self.config.max_num_seqs, dtype=torch.int64, pin_memory=pin)
                            for _ in range(2)]
        self._token_flip = 0
        self._closed = False
        self._gc_threshold = tune_collector()

    # -- Engine interface ---------------------------------------------------------------------
    def add_request(self, prompt_token_ids: Seq[int], params: SamplingParams,
                    request_id: str | None = None, *, final_only: bool = False) -> str:
        # final_only saves nothing here: a step's outputs cost less than telling them apart.
        self._check_open()
        prompt = self._validate_prompt(prompt_token_ids)
        if not isinstance(params, SamplingParams):
            raise InvalidInputError(f"params must be a SamplingParams, got {type(params).__name__}", field="params")
        if request_id is None:
            request_id = f"req-{next(self._req_ids)}"
        stop = frozenset(params.effective_stop_ids(self.stop_token_ids))
        seed = params.seed if params.seed is not None else self._rng.getrandbits(63)
        seq = Sequence(next(self._seq_ids), request_id, prompt, params, stop_ids=stop, seed=seed)
        self.scheduler.add(seq)
        return request_id

    def step(self) -> list[RequestOutput]:
        self._check_open()
        outputs, self._aborted = self._aborted, []
        timer = self.timer
        timer.start()
        plan = self.scheduler.schedule()
        for seq in plan.preempted:
            self.sampler.release(seq.seq_id)
        timer.lap("schedule")
        launched = None if plan.is_empty else self._launch(plan)
        if self.overlap:
            previous, self._inflight = self._inflight, launched
        else:
            previous = launched
        if previous is not None:
            outputs.extend(self._complete(previous))
            timer.lap("postprocess")
        if launched is not None and timer.enabled:
            timer.end_step(plan.batch.num_tokens, len(plan.seqs))
        return outputs

    def _launch(self, plan: SchedulerOutput) -> _InFlight:
        """Queue the step on the device: inputs, forward, sampling, and the copy of the ids."""
        timer = self.timer
        prev = self._inflight.tokens if self._inflight is not None else None
        prepared = self.runner.prepare(plan.batch, deferred_dst=plan.deferred_dst, deferred_src=plan.deferred_src,
                                       prev_tokens=prev)
        timer.lap("prepare")
        logits = self.runner.run(prepared)  # [num_sample, vocab] fp32
        timer.lap("forward")
        tokens = host = event = None
        if plan.sample_seqs:
            tokens = self.sampler.sample(logits, plan.sample_seqs)  # [num_sample] int64, device
            if self.device.type == "cuda":
                self._token_flip ^= 1
                host = self._token_host[self._token_flip][: tokens.shape[0]]
                host.copy_(tokens, non_blocking=True)
                event = torch.cuda.Event()
                event.record()
            else:
                host = tokens
        timer.lap("sample")
        return _InFlight(plan, tokens, host, event)

    def _complete(self, step: _InFlight) -> list[RequestOutput]:
        """Read a launched step's ids (the one host sync) and apply them."""
        if step.event is not None:
            step.event.synchronize()
        self.timer.lap("wait")
        sampled = step.host.tolist() if step.host is not None else []
        result = self.scheduler.update(step.plan, sampled, time.perf_counter())
        for seq in result.finished:
            self.sampler.release(seq.seq_id)
        return [self._output(seq, tok) for seq, tok in result.progressed]

    def abort(self, request_id: str) -> None:
        seq = self.scheduler.abort(request_id)
        if seq is not None and self.sampler is not None:
            self.sampler.release(seq.seq_id)
            self._aborted.append(self._output(seq, None))

    def has_unfinished(self) -> bool:
        return self._inflight is not None or self.scheduler.has_unfinished()

    def stats(self) -> EngineStats:
        sched, bm = self.scheduler, self.block_manager
        return EngineStats(
            num_running=len(sched.running),
            num_waiting=len(sched.waiting),
            kv_blocks_total=bm.num_usable_blocks,
            kv_blocks_used=bm.num_used_blocks,
            gpu_memory_bytes=torch.cuda.memory_reserved(self.device) if self.device.type == "cuda" else 0,
            generated_tokens_total=sched.generated_tokens,
            generation_steps_total=sched.generation_steps,
            prompt_tokens_total=sched.prompt_tokens_computed,
            step_kinds=self.runner.step_kinds.snapshot(),
            step_profile=self.timer.summary() if self.timer.enabled else None,
        )

    def memory_report(self) -> MemoryReport:
        return self.plan.report(cuda_graph_bytes=self.runner.graph_pool_bytes, sampler_bytes=self.sampler.state_bytes)

    def device_name(self) -> str:
        return str(self.device)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._inflight = None
        self.sampler = None
        self.runner.close()
        untune_collector(self._gc_threshold)  # the collector sees the engine's objects again
        set_triton_disabled(self._triton_was_disabled)

    # -- helpers ----------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            raise EngineError("the engine is closed")

    def _validate_prompt(self, prompt_token_ids: Seq[int]) -> list[int]:
        try:
            prompt = [int(t) for t in prompt_token_ids]
        except (TypeError, ValueError) as e:
            raise InvalidInputError("prompt_token_ids must be a sequence of integer token ids",
                                    field="prompt_token_ids") from e
        if not prompt:
            raise InvalidInputError("prompt_token_ids must not be empty", field="prompt_token_ids")
        lo, hi = min(prompt), max(prompt)
        if lo < 0 or hi >= self.vocab_size:
            bad = lo if lo < 0 else hi
            raise InvalidInputError(f"token id {bad} is outside the vocabulary [0, {self.vocab_size})",
                                    field="prompt_token_ids")
        return prompt

    def _output(self, seq: Sequence, token: int | None) -> RequestOutput:
        # Positional construction and direct attribute reads: this runs once per request per step.
        reason = seq.finish_reason
        # A stop token ends the request without being part of its tokens.
        new = [] if token is None or reason == "stop" else [token]
        return RequestOutput(
            seq.request_id, seq.prompt, seq.token_ids[seq.num_prompt_tokens :], new, reason is not None,
            reason, None, seq.arrival_time, seq.first_token_time, seq.finish_time,
        )
