"""What crosses a connection between an engine child and its clients.

The child is started with an `EngineSpec` (and, to serve several processes, an
`EngineAddress` to listen on). On the spawning pipe and on every connection made to the
address, the same exchange:

    client -> child:  Commands (adds and aborts, applied in order) ... Close
    child -> client:  Started | StartFailed, then one StepReport per engine step while the
                      client has requests in flight (and one after commands that changed
                      something while no step ran: rejections, aborts)

Every message is a frozen dataclass; requests and errors are referred to by request id,
which is unique per connection only (the child keeps the clients' requests apart).
"""
from __future__ import annotations

import os
import secrets
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hymt.engine.backend_names import LOCAL_BACKENDS
from hymt.engine.config import EngineConfig
from hymt.engine.interface import EngineStats
from hymt.engine.memory_report import MemoryReport
from hymt.engine.outputs import FinishReason
from hymt.engine.sampling import SamplingParams
from hymt.errors import InvalidInputError

if TYPE_CHECKING:
    from hymt.engine.interface import Engine


@dataclass(frozen=True)
class EngineSpec:
    """What the child builds: `create_engine(backend, model, device=, dtype=, config=, **options)`.

    Attributes:
        backend: a local backend (backend_names.LOCAL_BACKENDS: "native", "transformers").
        model: a local checkpoint dir or hub id (the child loads it itself).
        device / dtype / config / options: as for `hymt.engine.factory.create_engine`.
        builder: instead of create_engine, a picklable zero-argument callable returning the
            Engine (tests and tools: a stand-in engine).
        log_setup: a picklable zero-argument callable that configures logging in the child
            (the server passes its JSON set-up); None: plain lines at the parent's level.
    """

    backend: str = "native"
    model: str | None = None
    device: str | None = None
    dtype: str | None = None
    config: EngineConfig | None = None
    options: dict[str, Any] = field(default_factory=dict)
    builder: Callable[[], Engine] | None = None
    log_setup: Callable[[], None] | None = None

    def __post_init__(self) -> None:
        if self.builder is None and self.backend not in LOCAL_BACKENDS:
            raise InvalidInputError(
                f"an engine process runs a local backend; valid: {', '.join(LOCAL_BACKENDS)}, got {self.backend!r}",
                field="backend",
            )

    def build(self) -> Engine:
        if self.builder is not None:
            return self.builder()
        from hymt.engine.factory import create_engine

        return create_engine(self.backend, self.model, device=self.device, dtype=self.dtype, config=self.config,
                             **self.options)


@dataclass(frozen=True)
class EngineAddress:
    """Where an engine child listens for more clients: a Unix socket and the key they must know.

    Attributes:
        path: the socket's file, in a directory only this user can enter.
        authkey: the shared secret of multiprocessing.connection's handshake.
    """

    path: str
    authkey: bytes

    @classmethod
    def private(cls) -> EngineAddress:
        """A fresh address in a new directory of mode 0700 (the caller removes it at the end)."""
        directory = tempfile.mkdtemp(prefix="hymt-engine-")
        return cls(os.path.join(directory, "engine.sock"), secrets.token_bytes(32))

    @property
    def directory(self) -> Path:
        return Path(self.path).parent


# -- client -> child ---------------------------------------------------------------------------
@dataclass(frozen=True)
class AddRequest:
    """Engine.add_request in the child (final_only: send the tokens once, at the end)."""

    request_id: str
    prompt_token_ids: list[int]
    params: SamplingParams
    final_only: bool


@dataclass(frozen=True)
class AbortRequest:
    request_id: str


Command = AddRequest | AbortRequest


@dataclass(frozen=True)
class Commands:
    """Commands buffered since the last send, in the order they were given (none: a request
    for a report of fresh stats)."""

    commands: tuple[Command, ...]


@dataclass(frozen=True)
class Close:
    """Stop stepping, close the engine and exit."""


ParentMessage = Commands | Close


# -- child -> client ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Started:
    """The child's first message: what callers read from an Engine without asking it."""

    backend: str
    pid: int
    stop_token_ids: tuple[int, ...]
    device: str | None
    memory_report: MemoryReport | None
    stats: EngineStats


@dataclass(frozen=True)
class StartFailed:
    """The engine could not be built; the parent raises `error` (sent on the spawning pipe only)."""

    error: BaseException


@dataclass(frozen=True)
class Rejection:
    """The child's engine refused an AddRequest: only that request fails."""

    request_id: str
    error: BaseException


#: One request's progress in a step: (request id, new token ids, finish reason or None,
#: arrival, first-token and finish times, perf_counter stamps of the child's clock).
RequestProgress = tuple[str, list[int], FinishReason | None, float, float | None, float | None]


@dataclass(frozen=True)
class StepReport:
    """One child step: each request that progressed, rejected adds, and the engine's counters.

    The per-request fields are parallel tuples (one entry per request): a step of 512 requests
    pickles and unpickles in 0.13 ms as columns against 0.68 ms as one dataclass per request,
    and the parent shares its GIL with the HTTP layer. `new_token_ids` holds all of a
    final-only request's tokens. `step_error` is set when the step itself failed.
    """

    request_ids: tuple[str, ...]
    new_token_ids: tuple[list[int], ...]
    finish_reasons: tuple[FinishReason | None, ...]
    arrival_times: tuple[float, ...]
    first_token_times: tuple[float | None, ...]
    finish_times: tuple[float | None, ...]
    rejected: tuple[Rejection, ...]
    stats: EngineStats
    step_error: str | None = None

    @classmethod
    def of(cls, progress: list[RequestProgress], rejected: tuple[Rejection, ...], stats: EngineStats,
           step_error: str | None = None) -> StepReport:
        ids, new, reasons, arrivals, firsts, finishes = zip(*progress) if progress else ((),) * 6
        return cls(tuple(ids), tuple(new), tuple(reasons), tuple(arrivals), tuple(firsts), tuple(finishes),
                   rejected, stats, step_error)

    def progress(self) -> Iterator[RequestProgress]:
        return zip(self.request_ids, self.new_token_ids, self.finish_reasons, self.arrival_times,
                   self.first_token_times, self.finish_times)


ChildMessage = Started | StartFailed | StepReport
