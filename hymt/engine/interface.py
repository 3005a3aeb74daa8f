"""The contract every token engine backend meets: token ids in, token ids out.

The engine knows nothing of translation. The translation pipeline renders prompts, hands
their token ids to an `Engine`, and decodes what comes back. Backends: `native` (hymt's own
engine), `transformers` (the reference and baseline) and `openai` (a remote server).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

from hymt.engine.memory_report import MemoryReport
from hymt.engine.outputs import RequestOutput
from hymt.engine.run_to_completion import run_to_completion
from hymt.engine.sampling import SamplingParams
from hymt.engine.step_kinds import StepKinds
from hymt.engine.step_profile import StepProfile
from hymt.errors import InvalidInputError


@dataclass(frozen=True)
class EngineStats:
    """A snapshot of engine load, read by the server's /metrics.

    Attributes:
        num_running: sequences in the running batch.
        num_waiting: sequences queued for admission.
        kv_blocks_total / kv_blocks_used: paged-KV occupancy (0 where not paged).
        gpu_memory_bytes: device memory the engine holds now (0 on CPU).
        generated_tokens_total: tokens generated since start.
        generation_steps_total: engine steps (model calls) that generated a token since start;
            generated / steps is the mean batch the engine ran.
        prompt_tokens_total: prompt tokens computed since start.
        engine_process_cpu_seconds: CPU time of the engine's own process (an EngineProcess
            child) since it started; 0 when the engine runs in the caller's process.
        step_kinds: the native engine's steps by graph or eager, and the graphs' padding
            (zeros for other engines).
        step_profile: the native engine's time per step phase since start, where
            EngineConfig.step_profile times them (HYMT_PROFILE); None otherwise.
    """

    num_running: int = 0
    num_waiting: int = 0
    kv_blocks_total: int = 0
    kv_blocks_used: int = 0
    gpu_memory_bytes: int = 0
    generated_tokens_total: int = 0
    generation_steps_total: int = 0
    prompt_tokens_total: int = 0
    engine_process_cpu_seconds: float = 0.0
    step_kinds: StepKinds = StepKinds()
    step_profile: StepProfile | None = None


class Engine(ABC):
    """A step-driven token engine.

    Callers add requests at any time, call `step()` until `has_unfinished()` is False, and
    read one `RequestOutput` per request that made progress in that step. `generate` is the
    offline convenience built on these primitives (run_to_completion.py).
    """

    #: Token ids that end generation by default (the checkpoint's eos / generation_config).
    stop_token_ids: tuple[int, ...] = ()

    @abstractmethod
    def add_request(
        self,
        prompt_token_ids: Sequence[int],
        params: SamplingParams,
        request_id: str | None = None,
        *,
        final_only: bool = False,
    ) -> str:
        """Queue one request; returns its id (generated when not given).

        final_only: the caller reads only the request's final output. The engine may then
        leave out the outputs before it (an engine in another process saves sending them);
        the new_token_ids of the outputs it does return still add up to the final token_ids.
        Engines that save nothing by it return every output as usual.
        """

    @abstractmethod
    def step(self) -> list[RequestOutput]:
        """Run one engine iteration; returns outputs of requests that progressed or finished."""

    @abstractmethod
    def abort(self, request_id: str) -> None:
        """Drop a request at once, freeing what it holds. Unknown ids are ignored."""

    @abstractmethod
    def has_unfinished(self) -> bool:
        """True while any request is waiting or running."""

    def generate(
        self,
        prompts: Sequence[Sequence[int]],
        params: SamplingParams | Sequence[SamplingParams],
    ) -> list[RequestOutput]:
        """Run every prompt to completion (run_to_completion); results come back in input order."""
        if isinstance(params, SamplingParams):
            params = [params] * len(prompts)
        if len(params) != len(prompts):
            raise InvalidInputError(f"got {len(prompts)} prompts but {len(params)} SamplingParams", field="params")
        return run_to_completion(self, zip(prompts, params))

    def stats(self) -> EngineStats:
        """Counters for metrics endpoints; backends override what they know."""
        return EngineStats()

    def memory_report(self) -> MemoryReport | None:
        """Where the engine's device memory went; None for engines that do not plan it."""
        return None

    def device_name(self) -> str | None:
        """The device the engine computes on ("cuda:0", "cpu"); None when it is not local."""
        return None

    def close(self) -> None:  # noqa: B027 - optional: engines holding nothing keep this default
        """Release devices and threads. Idempotent."""
