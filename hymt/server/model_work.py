"""The two ways a handler runs model work.

`execute` (one answer) and `open_stream` (SSE) both: check readiness (503), take an
admission slot (429), and bound the work by the request timeout (504) and the client's
connection (a disconnect cancels the work and with it the engine requests).
"""
from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeVar

from fastapi import Request

from hymt.errors import InvalidInputError
from hymt.server.admission import run_cancellable
from hymt.server.errors import ApiError
from hymt.server.sse import EventStreamResponse
from hymt.server.state import state_of

T = TypeVar("T")
logger = logging.getLogger(__name__)


async def execute(request: Request, work: Callable[[], Awaitable[T]]) -> T:
    """Run `work` admitted, cancellable and bounded by --request-timeout."""
    st = state_of(request)
    st.service.require_ready()
    with st.admission.slot():
        return await run_cancellable(request, work, st.settings.request_timeout)


def open_stream(request: Request, events: Callable[[], AsyncIterator[str]], on_error: Callable[[ApiError], str],
                headers: dict[str, str] | None = None) -> EventStreamResponse:
    """An SSE response over `events()`, holding an admission slot until it ends.

    Errors after the 200 has been sent (engine fault, --request-timeout passing) end the
    stream with `on_error(ApiError)`, the protocol's own error event; a timeout cancels the
    iterator first, and with it its engine requests.
    """
    st = state_of(request)
    st.service.require_ready()
    st.admission.acquire()
    body = _guarded(events(), st.settings.request_timeout, on_error)
    return EventStreamResponse(body, on_close=_once(st.admission.release), headers=headers)


async def _guarded(source: AsyncIterator[str], timeout: float, on_error: Callable[[ApiError], str]) -> AsyncIterator[str]:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    iterator = source.__aiter__()
    try:
        while True:
            try:
                chunk = await asyncio.wait_for(iterator.__anext__(), max(end - loop.time(), 0.001))
            except StopAsyncIteration:
                return
            except TimeoutError:
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
                logger.exception("stream failed")
                yield on_error(ApiError(500, f"engine error: {type(exc).__name__}: {exc}", type="engine_error"))
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
