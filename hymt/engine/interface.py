"""The contract every token engine backend meets: token ids in, token ids out.

The engine knows nothing of translation. The translation pipeline renders prompts, hands
their token ids to an `Engine`, and decodes what comes back. Backends: `native` (hymt's own
engine), `transformers` (the reference and baseline) and `openai` (a remote server).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from hymt.engine.outputs import RequestOutput
from hymt.engine.sampling import SamplingParams


class Engine(ABC):
    """A step-driven token engine.

    Callers add requests at any time, call `step()` until `has_unfinished()` is False, and
    read one `RequestOutput` per request that made progress in that step. `generate` is the
    offline convenience built on the three primitives.
    """

    #: Token ids that end generation by default (the checkpoint's eos / generation_config).
    stop_token_ids: tuple[int, ...] = ()
    #: add_request takes `deltas=False`: then the request's outputs before the final one may
    #: be left out (an engine in another process saves sending them).
    supports_final_only: bool = False

    @abstractmethod
    def add_request(
        self, prompt_token_ids: Sequence[int], params: SamplingParams, request_id: str | None = None
    ) -> str:
        """Queue one request; returns its id (generated when not given)."""

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
        """Run every prompt to completion; results come back in input order. A request the
        engine refused (an output carrying `error`) raises that error."""
        if isinstance(params, SamplingParams):
            params = [params] * len(prompts)
        if len(params) != len(prompts):
            raise ValueError(f"got {len(prompts)} prompts but {len(params)} SamplingParams")
        ids = [self.add_request(p, sp) for p, sp in zip(prompts, params)]
        done: dict[str, RequestOutput] = {}
        while self.has_unfinished():
            for out in self.step():
                if out.error is not None:
                    raise out.error
                if out.finished:
                    done[out.request_id] = out
        return [done[i] for i in ids]

    def stats(self) -> EngineStats:
        """Counters for metrics endpoints; backends override what they know."""
        return EngineStats()

    def close(self) -> None:
        """Release devices and threads. Idempotent."""


from dataclasses import dataclass  # noqa: E402  (kept next to its only user)


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
