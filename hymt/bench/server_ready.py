"""Waiting until every HTTP worker of a hymt server has its model ready, before a load run.

`/ready` answers for whichever worker the connection reaches, so one 200 does not say that the
others are warm. Each worker's `/metrics` names it (`hymt_http_worker{worker="k"}`; a server of
one process exports no such series) and says whether its model is ready (`hymt_model_ready`).
Fresh connections are spread over the workers by the kernel, so enough scrapes see each one.
"""
from __future__ import annotations

import time

import httpx

from hymt.bench.server_counters import scrape_metrics
from hymt.errors import HymtError

_WORKER = "hymt_http_worker"
_READY = "hymt_model_ready"
_SINGLE = "1"  # the worker number a one-process server stands for
READY_TIMEOUT_S = 300.0  # a 7B loads and warms in well under a minute; a cold disk takes longer


class ServerNotReadyError(HymtError):
    """The server's workers did not all report their model ready in time."""


def wait_for_ready_workers(url: str, workers: int, *, headers: dict[str, str] | None = None,
                           timeout_s: float = READY_TIMEOUT_S, poll_s: float = 0.05) -> set[str]:
    """Scrape `url`/metrics until `workers` distinct HTTP workers have reported their model
    ready; returns their worker numbers. Raises ServerNotReadyError after `timeout_s`."""
    ready: set[str] = set()
    deadline = time.monotonic() + timeout_s
    while len(ready) < workers:
        if time.monotonic() > deadline:
            raise ServerNotReadyError(
                f"{len(ready)} of {workers} HTTP workers of {url} reported their model ready within "
                f"{timeout_s:.0f} s (seen: {sorted(ready) or 'none'})")
        worker = _ready_worker(url, headers or {})
        if worker is not None:
            ready.add(worker)
        time.sleep(poll_s)
    return ready


def _ready_worker(url: str, headers: dict[str, str]) -> str | None:
    """The number of the worker one fresh connection reached, if its model is ready."""
    try:
        samples = scrape_metrics(url, headers)
    except httpx.HTTPStatusError as exc:
        if exc.response.status_code in (401, 403):
            raise ServerNotReadyError(f"{url}/metrics answered {exc.response.status_code}: pass the server's API "
                                      "key (--api-key) to read which workers are ready") from None
        return None  # restarting
    except (httpx.HTTPError, ValueError):  # not up yet
        return None
    if not any(s.name == _READY and s.value == 1 for s in samples):
        return None
    numbers = [s.labels["worker"] for s in samples if s.name == _WORKER and "worker" in s.labels]
    return numbers[0] if numbers else _SINGLE
