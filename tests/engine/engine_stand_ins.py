"""Stand-in engines for the tests of engine drivers (run_to_completion, AsyncEngine).

`CountingEngine` answers without a model; with `gated=True` its steps run only as the test
allows them, so a test decides what happens between two steps instead of racing a clock.
(A module with a unique name: pytest puts this directory on sys.path.)
"""
from __future__ import annotations

import threading
from collections.abc import Sequence

from hymt.engine.interface import Engine, EngineStats
from hymt.engine.outputs import RequestOutput
from hymt.engine.sampling import SamplingParams
from hymt.errors import InvalidInputError

FAULT = 666  # a prompt starting with it makes step() raise: a fault no single request owns
WAIT_S = 10.0  # longest a gated step or a test waits for the other side


class CountingEngine(Engine):
    """Each step gives every request one token, prompt[0] + tokens so far, up to max_tokens.

    gated: step() waits until `allow_steps` lets it run; `wait_steps(n)` waits until n steps
    have finished. The engine records which threads touched it and what was aborted.
    """

    stop_token_ids = (0,)

    def __init__(self, *, gated: bool = False):
        self.reqs: dict[str, tuple[list[int], SamplingParams, list[int]]] = {}
        self.final_only: set[str] = set()
        self.aborted: list[str] = []
        self.closed = False
        self.thread_ids: set[int] = set()
        self._gated = gated
        self._cond = threading.Condition()
        self._allowed = 0
        self._taken = 0
        self._waiting = False

    # -- the test's side ------------------------------------------------------------------
    def allow_steps(self, n: int = 1) -> None:
        with self._cond:
            self._allowed += n
            self._cond.notify_all()

    def wait_steps(self, n: int) -> None:
        """Until n steps in all have finished."""
        with self._cond:
            if not self._cond.wait_for(lambda: self._taken >= n, WAIT_S):
                raise TimeoutError(f"{self._taken} of {n} steps finished")

    def wait_blocked(self) -> None:
        """Until a step is waiting for `allow_steps`."""
        with self._cond:
            if not self._cond.wait_for(lambda: self._waiting, WAIT_S):
                raise TimeoutError("no step is waiting")

    # -- Engine -----------------------------------------------------------------------------
    def add_request(self, prompt_token_ids: Sequence[int], params: SamplingParams, request_id: str | None = None,
                    *, final_only: bool = False) -> str:
        self.thread_ids.add(threading.get_ident())
        if not prompt_token_ids:
            raise InvalidInputError("prompt_token_ids must not be empty", field="prompt_token_ids")
        request_id = request_id or f"count-{len(self.reqs) + len(self.aborted)}-{id(prompt_token_ids)}"
        self.reqs[request_id] = (list(prompt_token_ids), params, [])
        if final_only:
            self.final_only.add(request_id)
        return request_id

    def step(self) -> list[RequestOutput]:
        self.thread_ids.add(threading.get_ident())
        if self._gated:
            self._wait_turn()
        try:
            return self._advance()
        finally:
            with self._cond:
                self._taken += 1
                self._cond.notify_all()

    def abort(self, request_id: str) -> None:
        self.aborted.append(request_id)
        self.reqs.pop(request_id, None)

    def has_unfinished(self) -> bool:
        return bool(self.reqs)

    def stats(self) -> EngineStats:
        return EngineStats(num_running=len(self.reqs))

    def close(self) -> None:
        self.closed = True

    # -- internals ----------------------------------------------------------------------------
    def _wait_turn(self) -> None:
        with self._cond:
            self._waiting = True
            self._cond.notify_all()
            allowed = self._cond.wait_for(lambda: self._allowed > self._taken, WAIT_S)
            self._waiting = False
        if not allowed:
            raise RuntimeError("the test never allowed this step")

    def _advance(self) -> list[RequestOutput]:
        if any(prompt[0] == FAULT for prompt, _, _ in self.reqs.values()):
            raise RuntimeError("kernel fault")
        outs = []
        for rid, (prompt, params, toks) in list(self.reqs.items()):
            toks.append(prompt[0] + len(toks))
            done = len(toks) >= params.max_tokens
            outs.append(RequestOutput(rid, prompt, list(toks), [toks[-1]], done, "length" if done else None))
            if done:
                del self.reqs[rid]
        return outs
