"""ReplicaGuard: one Ray Serve replica's hymt app, as Ray should see it.

A replica is a whole hymt server (create_app) with its own engine. The guard wraps that app
and adds what a replica behind a shared endpoint needs:

- Ready only when its model is: the app's startup (lifespan) waits until the model is loaded
  and warm, so Ray routes to a replica only once it can translate, and a replica whose model
  fails to load fails to start (Ray retries it, then reports the deployment failed).
- Liveness: `failure()` says why the replica can no longer serve (its engine process died,
  or the model stopped serving after it was ready). Ray's health check asks it; once it
  answers, Ray stops routing to the replica and starts a new one while the others serve.
  It is sticky: a replica that failed once is replaced, never trusted again.
- Retryable answers: once failed, the replica answers every request, and every request
  that was in flight and ends in a 5xx, with 503 and Retry-After in the request's protocol
  shape, so clients and gateways retry (on a healthy replica). A stream whose 200 was
  already sent ends with its protocol's error event instead.
- `X-Hymt-Replica` on every answer: which replica served it (load checks, debugging).
"""
from __future__ import annotations

import asyncio
import multiprocessing
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from fastapi import FastAPI
from starlette.types import Message, Receive, Scope, Send

from hymt.server.errors import ApiError, protocol_of_scope, render_error
from hymt.server.service import ModelService

#: The response header naming the replica that answered.
REPLICA_HEADER = "x-hymt-replica"
#: How often the startup looks whether the model is ready.
_READY_POLL_S = 0.1
#: Looks at the engine after a request failed, and the pause between them.
_ERROR_RECHECKS = 10
_ERROR_RECHECK_S = 0.05


class ReplicaStartError(RuntimeError):
    """The replica's model could not be loaded within its time; Ray retries the replica."""


class ReplicaGuard:
    """ASGI app: `app` (a create_app server) with readiness, liveness and retryable answers.

    Args:
        app: the replica's server, built with load=True (its lifespan starts the model load).
        replica_id: the name shown in X-Hymt-Replica.
        engine_in_child: the engine runs in a child process of this replica (a local engine
            with engine_process on): its death means the replica must be replaced.
        load_timeout_s: how long startup waits for the model.
        engine_alive: whether the engine's child process lives (default: a live
            multiprocessing child of this process; tests pass their own).
    """

    def __init__(self, app: FastAPI, replica_id: str, *, engine_in_child: bool, load_timeout_s: float,
                 engine_alive: Callable[[], bool] | None = None) -> None:
        self.app = app
        self.service: ModelService = app.state.hymt.service
        self.replica_id = replica_id
        self._retry_after = str(app.state.hymt.settings.retry_after_s)
        self._engine_in_child = engine_in_child
        self._engine_alive = engine_alive or _has_live_child
        self._load_timeout_s = load_timeout_s
        self._was_ready = False
        self._failure: str | None = None
        inner = app.router.lifespan_context
        app.router.lifespan_context = lambda a: self._lifespan(inner(a))

    # -- liveness ------------------------------------------------------------------------------
    def failure(self) -> str | None:
        """Why this replica can no longer serve (once set, for good), or None while it can."""
        if self._failure is not None:
            return self._failure
        service = self.service
        if service.ready:
            self._was_ready = True
            if self._engine_in_child and not self._engine_alive():
                self._failure = "the replica's engine process died"
        elif self._was_ready:
            self._failure = f"the replica's model stopped serving: {service.error or 'not ready'}"
        return self._failure

    # -- ASGI ------------------------------------------------------------------------------------
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        failure = self.failure()
        if failure is not None:
            await self._unavailable(scope, failure)(scope, receive, _with_replica(send, self.replica_id))
            return
        replaced = False

        async def guarded(message: Message) -> None:
            nonlocal replaced
            if replaced:  # the app's own error body, after our 503 went out instead
                return
            if message["type"] == "http.response.start" and message["status"] >= 500:
                failure = await self._failure_behind_error()
                if failure is not None:
                    replaced = True
                    await self._unavailable(scope, failure)(scope, receive, _with_replica(send, self.replica_id))
                    return
            await send(message)

        await self.app(scope, receive, _with_replica(guarded, self.replica_id))

    async def _failure_behind_error(self) -> str | None:
        """`failure()` for a request that failed: a killed engine's pipe closes a moment before
        its process can be reaped, so a live-looking engine is looked at again shortly."""
        for _ in range(_ERROR_RECHECKS):
            failure = self.failure()
            if failure is not None or not self._engine_in_child:
                return failure
            await asyncio.sleep(_ERROR_RECHECK_S)
        return self.failure()

    def _unavailable(self, scope: Scope, failure: str):
        err = ApiError(503, f"this replica is being replaced ({failure}); retry the request",
                       type="replica_unavailable", headers={"Retry-After": self._retry_after})
        return render_error(protocol_of_scope(scope), err)

    # -- startup ---------------------------------------------------------------------------------
    @asynccontextmanager
    async def _lifespan(self, inner: AbstractAsyncContextManager[Any]) -> AsyncIterator[None]:
        async with inner:  # starts the model load (create_app's lifespan)
            await self._wait_ready()
            yield

    async def _wait_ready(self) -> None:
        deadline = time.monotonic() + self._load_timeout_s
        while not self.service.ready:
            if self.service.error:
                raise ReplicaStartError(f"the model could not be loaded: {self.service.error}")
            if time.monotonic() > deadline:
                raise ReplicaStartError(f"the model was not ready after {self._load_timeout_s:.0f} s")
            await asyncio.sleep(_READY_POLL_S)
        self._was_ready = True


def _with_replica(send: Send, replica_id: str) -> Send:
    header = (REPLICA_HEADER.encode(), replica_id.encode())

    async def tagged(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", []), header]}
        await send(message)

    return tagged


def _has_live_child() -> bool:
    """A multiprocessing child of this process lives (the replica's one child is its engine);
    finished children are reaped on the way."""
    return bool(multiprocessing.active_children())
