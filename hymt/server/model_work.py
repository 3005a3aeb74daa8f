"""The two ways a handler runs model work.

`execute` (one answer) and `open_stream` (SSE) both: check readiness (503), take admission
places for the request's texts (429, 413; 503 once shutting down), and bound the work by the
request timeout (504), the client's connection (a disconnect cancels the work and with it
the engine requests) and shutdown (cut at --shutdown-timeout: 503, or the stream's error
event).
"""
from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeVar

from fastapi import Request

from hymt.errors import InvalidInputError
from hymt.server.admission import run_cancellable, shutting_down_error
from hymt.server.drain import Drain
from hymt.server.errors import ApiError, incident
from hymt.server.sse import EventStreamResponse
from hymt.server.state import state_of

T = TypeVar("T")
logger = logging.getLogger(__name__)


async def execute(request: Request, work: Callable[[], Awaitable[T]], *, texts: int = 1) -> T:
    """Run `work` admitted (`texts` places), cancellable and bounded by --request-timeout."""
    st = state_of(request)
    st.service.require_ready()
    with st.admission.slot(texts):
        return await run_cancellable(request, work, st.settings.request_timeout, st.drain.cut_future())


def open_stream(request: Request, events: Callable[[], AsyncIterator[str]], on_error: Callable[[ApiError], str],
                headers: dict[str, str] | None = None, *, texts: int = 1) -> EventStreamResponse:
    """An SSE response over `events()`, holding its admission places until it ends.

    Errors after the 200 has been sent (engine fault, --request-timeout passing, shutdown)
    end the stream with `on_error(ApiError)`, the protocol's own error event; a timeout or a
    cut cancels the iterator first, and with it its engine requests.
    """
    st = state_of(request)
    st.service.require_ready()
    st.admission.acquire(texts)
    body = _guarded(events(), st.settings.request_timeout, on_error, st.drain)
    return EventStreamResponse(body, on_close=_once(lambda: st.admission.release(texts)), headers=headers)


async def _guarded(source: AsyncIterator[str], timeout: float, on_error: Callable[[ApiError], str],
                   drain: Drain) -> AsyncIterator[str]:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    iterator = source.__aiter__()
    try:
        while True:
            try:
                async with asyncio.timeout_at(end) as deadline:
                    with drain.track(deadline):
                        chunk = await iterator.__anext__()
            except StopAsyncIteration:
                return
            except TimeoutError:
                if drain.cut_done:
                    yield on_error(shutting_down_error())
                    return
                yield on_error(ApiError(504, f"the stream took longer than {timeout:g} s (--request-timeout) "
                                        "and was cancelled", type="timeout"))
                return
            except ApiError as err:
                yield on_error(err)
                return
            except InvalidInputError as exc:
                yield on_error(ApiError.from_input_error(exc))
                return
            except Exception as exc:  # an engine fault ends this stream, never the server
                yield on_error(incident("unexpected error", exc, "a stream"))
                return
            yield chunk
    finally:
        aclose = getattr(iterator, "aclose", None)
        if aclose is not None:
            await aclose()


def _once(fn: Callable[[], None]) -> Callable[[], None]:
    done = False

    def run() -> None:
        nonlocal done
        if not done:
            done = True
            fn()

    return run
