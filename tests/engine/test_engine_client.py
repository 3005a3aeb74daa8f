"""EngineClient: several processes' connections to one engine child keep their requests apart.

The child runs a CountingEngine stand-in (every request's k-th token is prompt[0] + k), so
each output says whose prompt it came from, whose steps take 2 ms as a device's would. Each
test starts its own child (no torch: a fraction of a second).
"""
from __future__ import annotations

import os
import shutil
import signal
import threading
import time

import pytest
from engine_stand_ins import CountingEngine

from hymt.engine.engine_client import EngineClient
from hymt.engine.engine_process import EngineAddress, EngineProcess, EngineSpec
from hymt.engine.sampling import SamplingParams
from hymt.errors import EngineError, ModelLoadError

LONG = SamplingParams(max_tokens=10**9)


class PacedEngine(CountingEngine):
    """CountingEngine whose steps take 2 ms."""

    def step(self):
        time.sleep(0.002)
        return super().step()


def _params(n: int) -> SamplingParams:
    return SamplingParams(max_tokens=n)


@pytest.fixture()
def address():
    address = EngineAddress.private()
    yield address
    shutil.rmtree(address.directory, ignore_errors=True)


@pytest.fixture()
def engine(address):
    owner = EngineProcess(EngineSpec(builder=PacedEngine), listen=address)
    yield owner
    owner.close()


def _until(predicate, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "not within the time"
        time.sleep(0.01)


def test_clients_get_only_their_own_outputs_though_their_ids_collide(engine, address):
    one, two = EngineClient(address), EngineClient(address)
    assert one.engine_pid == two.engine_pid == engine.pid and one.backend == engine.backend
    results: dict[str, list] = {}

    def run(name: str, client, first: int) -> None:  # generate() names requests proc-0, proc-1, ...
        results[name] = client.generate([[first], [first + 1]], _params(200))

    try:
        threads = [threading.Thread(target=run, args=(name, c, first))
                   for name, c, first in (("one", one, 1000), ("two", two, 5000), ("owner", engine, 9000))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        for name, first in (("one", 1000), ("two", 5000), ("owner", 9000)):
            outs = results[name]
            assert [o.request_id for o in outs] == ["proc-0", "proc-1"]
            assert [o.token_ids for o in outs] == [list(range(p, p + 200)) for p in (first, first + 1)], name
            assert all(o.finished and o.finish_reason == "length" for o in outs)
    finally:
        one.close()
        two.close()


def test_a_client_that_closes_has_its_requests_aborted(engine, address):
    leaving, staying = EngineClient(address), EngineClient(address)
    try:
        leaving.add_request([7], LONG, request_id="r")
        leaving.step()  # the child has it running; from now on this client reads nothing
        # 1500 steps of reports to it unread, more than its socket holds: the child sends them
        # from a thread of their own, so the engine goes on for the others.
        assert staying.generate([[3]], _params(1500))[0].token_ids == list(range(3, 1503))
        assert staying.stats().num_running == 1  # the other client's request runs on
        leaving.close()
        # A request of its own, finished, and nothing else left running in the engine.
        _until(lambda: staying.generate([[3]], _params(2)) and staying.stats().num_running == 0)
    finally:
        staying.close()


def test_a_client_sees_the_engine_die_and_reconnects_to_its_restart(address):
    first = EngineProcess(EngineSpec(builder=PacedEngine), listen=address)
    client = EngineClient(address)
    try:
        client.add_request([7], LONG, request_id="r")
        client.step()
        os.kill(first.pid, signal.SIGKILL)
        with pytest.raises(EngineError, match="engine process died"):
            while True:
                client.step()
        assert client.pid is None
        _until(lambda: first.pid is None)
        second = EngineProcess(EngineSpec(builder=PacedEngine), listen=address)  # same socket path
        try:
            again = EngineClient(address, wait_s=10)
            assert again.pid == second.pid != client.engine_pid
            assert again.generate([[4]], _params(3))[0].token_ids == [4, 5, 6]
            again.close()
        finally:
            second.close()
    finally:
        client.close()
        first.close()


def test_an_idle_client_notices_the_engine_is_gone(engine, address):
    client = EngineClient(address)
    try:
        assert client.pid == engine.pid
        os.kill(engine.pid, signal.SIGKILL)
        _until(lambda: client.pid is None)
        with pytest.raises(EngineError, match="engine process died"):
            client.generate([[1]], _params(1))
    finally:
        client.close()


def test_connecting_waits_for_the_engine_unless_its_owner_gave_up(address):
    started = time.monotonic()
    with pytest.raises(ModelLoadError, match="no such model"):
        EngineClient(address, abandon=lambda: "no such model" if time.monotonic() - started > 0.3 else None)
    assert time.monotonic() - started >= 0.3
    with pytest.raises(EngineError, match="no engine accepted"):
        EngineClient(address, wait_s=0.2)


def test_a_wrong_key_is_refused(engine, address):
    from multiprocessing import AuthenticationError

    with pytest.raises(AuthenticationError):
        EngineClient(EngineAddress(address.path, b"not the key"))
    client = EngineClient(address)  # the child goes on accepting others
    try:
        assert client.generate([[2]], _params(2))[0].token_ids == [2, 3]
    finally:
        client.close()


def test_an_idle_client_reads_fresh_counters_of_the_others_work(engine, address):
    idle, busy = EngineClient(address), EngineClient(address)
    try:
        busy.add_request([7], LONG, request_id="r")
        busy.step()
        _until(lambda: idle.fresh_stats().num_running == 1)  # no report of busy's reaches idle
        busy.close()
        _until(lambda: idle.fresh_stats().num_running == 0)
    finally:
        idle.close()
