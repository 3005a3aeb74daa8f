"""AsyncEngine: one loop thread driving any `Engine`, with thread-safe submission.

Every server request and Translator call goes through it:

    ae = AsyncEngine(engine)
    handle = ae.submit(prompt_ids, params)      # from any thread
    out = handle.result()                       # blocking, or: out = await handle.wait()
    async for delta in handle.stream(): ...     # one RequestOutput per step with new tokens
    handle.cancel()                             # aborts in the engine, frees its blocks

The engine is touched only by the loop thread. Submissions and cancellations are queued and
applied between steps, so new requests join the running batch at the next step. A request the
engine rejects, or whose output cannot be delivered, fails alone (its handle raises); an
exception from `engine.step()` itself cannot be pinned on one request, so it fails the
requests in flight at that moment, aborts them in the engine and the loop goes on serving.
"""
from __future__ import annotations

import asyncio
import itertools
import logging
import threading
import time
from collections import deque
from collections.abc import AsyncGenerator, Sequence

from hymt.engine.interface import Engine, EngineStats
from hymt.engine.outputs import RequestOutput
from hymt.engine.sampling import SamplingParams
from hymt.errors import EngineError, HymtError

log = logging.getLogger(__name__)


class RequestHandle:
    """The caller's side of one submitted request. Safe to use from any thread or event loop."""

    def __init__(self, owner: AsyncEngine, request_id: str, prompt_token_ids: list[int]):
        self.request_id = request_id
        self._owner = owner
        self._prompt = prompt_token_ids
        self._cond = threading.Condition()
        self._deltas: deque[list[int]] = deque()  # new_token_ids per step, not yet streamed
        # Futures to resolve: on every delta (stream) or only at the end (wait). `wait()`
        # callers are not woken per token: with hundreds of requests in flight, one event-loop
        # wake-up per request per step starved the engine thread of the GIL.
        self._delta_waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future]] = []
        self._final_waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future]] = []
        self._final: RequestOutput | None = None
        self._error: BaseException | None = None
        self._latest: RequestOutput | None = None

    # -- loop-thread side ---------------------------------------------------------------------
    def _push(self, out: RequestOutput, wake: _WakeList) -> None:
        """Record one step's output; the futures to resolve go to `wake` (resolved in bulk)."""
        with self._cond:
            if self.done:
                return
            self._latest = out
            if out.new_token_ids:
                self._deltas.append(list(out.new_token_ids))
            if out.finished:
                self._final = out
            self._cond.notify_all()
            self._take_waiters(wake, final=out.finished)

    def _fail(self, error: BaseException) -> None:
        wake = _WakeList()  # failures are rare: woken one by one
        with self._cond:
            if self.done:
                return
            self._error = error
            self._cond.notify_all()
            self._take_waiters(wake, final=True)
        wake.resolve()

    def _take_waiters(self, wake: _WakeList, *, final: bool) -> None:
        wake.extend(self._delta_waiters)
        self._delta_waiters = []
        if final:
            wake.extend(self._final_waiters)
            self._final_waiters = []

    # -- caller side ------------------------------------------------------------------------
    @property
    def done(self) -> bool:
        return self._final is not None or self._error is not None

    def result(self, timeout: float | None = None) -> RequestOutput:
        """Block until the request finishes; raises its error (EngineError, InvalidInputError)."""
        with self._cond:
            if not self._cond.wait_for(lambda: self.done, timeout):
                raise TimeoutError(f"request {self.request_id} not finished after {timeout} s")
            return self._outcome()

    async def wait(self) -> RequestOutput:
        """Await the final output without blocking the event loop."""
        while True:
            with self._cond:
                if self.done:
                    return self._outcome()
                fut = self._register_waiter(self._final_waiters)
            await fut

    async def stream(self) -> AsyncGenerator[RequestOutput, None]:
        """Yield one RequestOutput per engine step that produced tokens; the last has finished=True.

        Concatenating the new_token_ids of everything yielded gives the final token_ids. When
        the finishing step adds no token (a stop token, a cancel) the last item has none.
        """
        emitted: list[int] = []
        while True:
            with self._cond:
                if self._deltas:
                    new: list[int] | None = self._deltas.popleft()
                    last = self._final is not None and not self._deltas
                elif self._error is not None:
                    raise self._error
                elif self._final is not None:
                    new, last = [], True
                else:
                    new, last, fut = None, False, self._register_waiter(self._delta_waiters)
            if new is None:
                await fut
                continue
            emitted.extend(new)
            yield self._delta(emitted, new, last)
            if last:
                return

    def cancel(self) -> None:
        """Abort the request: the engine frees its blocks at its next loop turn; result() gives "abort"."""
        self._owner._cancel(self)

    # -- internals --------------------------------------------------------------------------
    def _outcome(self) -> RequestOutput:
        if self._error is not None:
            raise self._error
        assert self._final is not None
        return self._final

    @staticmethod
    def _register_waiter(waiters: list) -> asyncio.Future:
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        waiters.append((loop, fut))
        return fut

    def _delta(self, emitted: list[int], new: list[int], last: bool) -> RequestOutput:
        final = self._final if last else None
        src = final or self._latest
        return RequestOutput(
            request_id=self.request_id,
            prompt_token_ids=self._prompt,
            token_ids=list(final.token_ids) if final is not None else list(emitted),
            new_token_ids=list(new),
            finished=final is not None,
            finish_reason=final.finish_reason if final is not None else None,
            text=final.text if final is not None else None,
            arrival_time=src.arrival_time if src is not None else 0.0,
            first_token_time=src.first_token_time if src is not None else None,
            finish_time=final.finish_time if final is not None else None,
        )


class _WakeList:
    """Futures of caller event loops, resolved with one call_soon_threadsafe per loop."""

    def __init__(self) -> None:
        self._by_loop: dict[asyncio.AbstractEventLoop, list[asyncio.Future]] = {}

    def extend(self, waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future]]) -> None:
        for loop, fut in waiters:
            self._by_loop.setdefault(loop, []).append(fut)

    def resolve(self) -> None:
        for loop, futures in self._by_loop.items():
            try:
                loop.call_soon_threadsafe(_resolve_all, futures)
            except RuntimeError:  # that event loop is closed: nobody is waiting any more
                pass
        self._by_loop.clear()


def _resolve_all(futures: list[asyncio.Future]) -> None:
    for fut in futures:
        if not fut.done():
            fut.set_result(None)


class AsyncEngine:
    """Drives `engine` from one daemon thread. `owns_engine`: close() also closes the engine."""

    def __init__(self, engine: Engine, *, owns_engine: bool = True, name: str = "hymt-engine"):
        self.engine = engine
        self._owns_engine = owns_engine
        self._lock = threading.Lock()
        self._wakeup = threading.Event()
        self._submits: deque[tuple[RequestHandle, list[int], SamplingParams, bool]] = deque()
        self._cancels: deque[RequestHandle] = deque()
        self._handles: dict[str, RequestHandle] = {}  # loop-thread only
        self._ids = itertools.count()
        self._closed = False
        self._stats = EngineStats()
        self.loop_error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    @property
    def stop_token_ids(self) -> tuple[int, ...]:
        return self.engine.stop_token_ids

    def submit(self, prompt_token_ids: Sequence[int], params: SamplingParams,
               request_id: str | None = None, *, stream: bool = True) -> RequestHandle:
        """Queue a request; returns at once. Errors surface through the handle.

        stream=False: the caller only waits for the end: the engine is asked for the final
        output only (`final_only`), which an engine process sends once, at the end; then
        `handle.stream()` may yield the final output alone.
        """
        if request_id is None:
            request_id = f"async-{next(self._ids)}"
        prompt = list(prompt_token_ids)
        handle = RequestHandle(self, request_id, prompt)
        with self._lock:
            if self._closed:
                raise EngineError("the AsyncEngine is closed")
            self._submits.append((handle, prompt, params, stream))
        self._wakeup.set()
        return handle

    def stats(self) -> EngineStats:
        """The engine's counters as of the last loop turn."""
        return self._stats

    def close(self, timeout: float | None = 30.0) -> None:
        """Stop the loop thread (pending requests fail with EngineError); idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._wakeup.set()
        self._thread.join(timeout)
        if self._owns_engine:
            self.engine.close()

    def __enter__(self) -> AsyncEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _cancel(self, handle: RequestHandle) -> None:
        with self._lock:
            self._cancels.append(handle)
        self._wakeup.set()

    # -- loop thread ------------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            self._apply_commands()
            if self._closed:
                break
            if self._handles and self.engine.has_unfinished():
                self._step()
            elif self._handles:
                self._fail_all("the engine has no work left for it")
            else:
                self._wakeup.wait(timeout=0.5)
                self._wakeup.clear()
                self._refresh_stats()  # an engine in another process may report late (aborts)
        self._shutdown()

    def _apply_commands(self) -> None:
        with self._lock:
            submits, self._submits = self._submits, deque()
            cancels, self._cancels = self._cancels, deque()
        for handle, prompt, params, stream in submits:
            if handle.request_id in self._handles:
                handle._fail(EngineError(f"request id {handle.request_id!r} is already in flight"))
                continue
            try:
                self.engine.add_request(prompt, params, request_id=handle.request_id, final_only=not stream)
            except HymtError as e:
                handle._fail(e)
                continue
            except Exception as e:  # noqa: BLE001 - any engine fault fails only this request
                handle._fail(EngineError(f"request {handle.request_id} could not be added: {e!r}"))
                continue
            self._handles[handle.request_id] = handle
        wake = _WakeList()
        for handle in cancels:
            if self._handles.pop(handle.request_id, None) is None:
                continue
            self._abort_quietly(handle.request_id)
            handle._push(RequestOutput(handle.request_id, handle._prompt,
                                       token_ids=list(handle._latest.token_ids) if handle._latest else [],
                                       finished=True, finish_reason="abort", finish_time=time.perf_counter()),
                         wake)
        wake.resolve()
        if submits or cancels:
            self._refresh_stats()

    def _step(self) -> None:
        try:
            outputs = self.engine.step()
        except Exception as e:  # noqa: BLE001 - the loop must survive
            log.exception("engine step failed; failing %d in-flight requests", len(self._handles))
            self.loop_error = e
            self._fail_all(f"engine step failed: {e!r}")
            return
        wake = _WakeList()
        for out in outputs:
            handle = self._handles.get(out.request_id)
            if handle is None:
                continue  # cancelled meanwhile, or not ours
            if out.error is not None:
                handle._fail(out.error)
                del self._handles[out.request_id]
                continue
            try:
                handle._push(out, wake)
            except Exception as e:  # noqa: BLE001 - a broken consumer fails only its request
                self._abort_quietly(out.request_id)
                handle._fail(EngineError(f"could not deliver output of {out.request_id}: {e!r}"))
                self._handles.pop(out.request_id, None)
                continue
            if out.finished:
                del self._handles[out.request_id]
        wake.resolve()
        self._refresh_stats()

    def _abort_quietly(self, request_id: str) -> None:
        try:
            self.engine.abort(request_id)
        except Exception:  # noqa: BLE001
            log.exception("abort of %s failed", request_id)

    def _refresh_stats(self) -> None:
        try:
            self._stats = self.engine.stats()
        except Exception:  # noqa: BLE001
            log.exception("engine.stats() failed")

    def _fail_all(self, reason: str) -> None:
        for rid, handle in list(self._handles.items()):
            self._abort_quietly(rid)
            handle._fail(EngineError(f"request {rid} failed: {reason}"))
        self._handles.clear()
        self._refresh_stats()

    def _shutdown(self) -> None:
        self._apply_commands_closed()
        self._fail_all("the AsyncEngine closed before it finished")

    def _apply_commands_closed(self) -> None:
        with self._lock:
            submits, self._submits = self._submits, deque()
            self._cancels.clear()
        for handle, *_ in submits:
            handle._fail(EngineError("the AsyncEngine closed before the request started"))
