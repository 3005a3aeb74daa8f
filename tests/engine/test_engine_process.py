"""EngineProcess: the engine in a spawned child behaves as the same engine in-process.

Each test starts a child (a fresh interpreter importing torch: a few seconds), so the
module shares one tiny checkpoint and as few children as the behaviours need.
"""
from __future__ import annotations

import asyncio
import functools
import os
import signal

import pytest

from hymt.engine.async_engine import AsyncEngine
from hymt.engine.engine_process import EngineProcess, EngineSpec
from hymt.engine.native_engine import NativeEngine
from hymt.engine.sampling import SamplingParams
from hymt.errors import EngineError, InvalidInputError, ModelLoadError

GREEDY = SamplingParams(max_tokens=12, temperature=0, ignore_eos=True)
SHORT = SamplingParams(max_tokens=2, temperature=0, ignore_eos=True)


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    from hymt.testing import write_tiny_checkpoint

    return write_tiny_checkpoint(tmp_path_factory.mktemp("proc") / "HY-MT1.5-1.8B", "HY-MT1.5-1.8B")


@pytest.fixture(scope="module")
def proc_engine(tiny_dir):
    engine = EngineProcess(EngineSpec("native", str(tiny_dir), device="cpu"))
    yield engine
    engine.close()


def test_same_greedy_tokens_as_the_engine_in_process(proc_engine, tiny_dir):
    prompts = [[5, 6, 7, 8], [9, 10], [11, 12, 13, 14, 15, 16]]
    local = NativeEngine(str(tiny_dir), device="cpu")
    try:
        expected = [o.token_ids for o in local.generate(prompts, GREEDY)]
    finally:
        local.close()
    got = proc_engine.generate(prompts, GREEDY)
    assert [o.token_ids for o in got] == expected
    assert all(o.finished and o.finish_reason == "length" and len(o.token_ids) == 12 for o in got)
    assert proc_engine.stop_token_ids and proc_engine.device_name() == "cpu" and proc_engine.backend == "native"
    assert proc_engine.memory_report().device == "cpu"  # planned in the child, sent once
    assert proc_engine.stats().generated_tokens_total >= 36  # stats come back from the child


def test_a_rejected_request_fails_alone_with_its_own_error(proc_engine):
    async def run():
        ae = AsyncEngine(proc_engine, owns_engine=False)
        try:
            good = ae.submit([5, 6, 7], GREEDY)
            bad = ae.submit([10**9], GREEDY)  # outside the vocabulary: refused by the child
            other = ae.submit([8, 9], GREEDY)
            with pytest.raises(InvalidInputError, match="outside the vocabulary"):
                await bad.wait()
            return await good.wait(), await other.wait()
        finally:
            ae.close()

    good, other = asyncio.run(run())
    assert len(good.token_ids) == 12 and len(other.token_ids) == 12


def test_cancel_frees_the_request_in_the_child(proc_engine):
    async def run():
        ae = AsyncEngine(proc_engine, owns_engine=False)
        try:
            handle = ae.submit([5, 6, 7], SamplingParams(max_tokens=4000, ignore_eos=True))
            async for _ in handle.stream():
                handle.cancel()
                break
            out = await handle.wait()
            # The child applies commands in order: the abort before the next request.
            follow = await ae.submit([5, 6], GREEDY).wait()
            return out, follow, proc_engine.stats()
        finally:
            ae.close()

    out, follow, stats = asyncio.run(run())
    assert out.finish_reason == "abort" and len(out.token_ids) < 4000
    assert len(follow.token_ids) == 12 and not proc_engine.has_unfinished()
    assert stats.num_running == 0 and stats.kv_blocks_used == 0


def test_a_bad_model_fails_start_up_with_model_load_error(tmp_path):
    with pytest.raises(ModelLoadError):
        EngineProcess(EngineSpec("native", str(tmp_path / "missing"), device="cpu"))


def test_a_dead_child_fails_what_is_in_flight_and_later_calls(tiny_dir):
    engine = EngineProcess(EngineSpec(builder=functools.partial(NativeEngine, str(tiny_dir), device="cpu")))

    async def run():
        ae = AsyncEngine(engine)
        try:
            handle = ae.submit([5, 6, 7], SamplingParams(max_tokens=4000, ignore_eos=True))
            async for _ in handle.stream():
                os.kill(engine.pid, signal.SIGKILL)
                break
            with pytest.raises(EngineError, match="engine process died"):
                await handle.wait()
            with pytest.raises(EngineError, match="engine process died"):
                await ae.submit([5], GREEDY).wait()
        finally:
            ae.close()

    asyncio.run(run())


def test_final_only_requests_get_the_same_tokens_in_one_output(proc_engine):
    async def run():
        ae = AsyncEngine(proc_engine, owns_engine=False)
        try:
            streamed = ae.submit([5, 6, 7], GREEDY)
            final_only = ae.submit([5, 6, 7], GREEDY, stream=False)
            deltas = [d async for d in streamed.stream()]
            finals = [d async for d in final_only.stream()]
            return deltas, finals, await final_only.wait()
        finally:
            ae.close()

    deltas, finals, out = asyncio.run(run())
    assert len(deltas) == 12 and len(finals) == 1  # one step each, against one output at the end
    assert finals[0].finished and finals[0].new_token_ids == out.token_ids == deltas[-1].token_ids
    assert len(out.token_ids) == 12 and out.finish_reason == "length"


def test_stats_from_another_thread_loses_no_output(proc_engine):
    """stats() may be read from any thread (metrics, tests) while the loop thread steps and
    reads the acknowledgements of aborts: the pipe has one reader at a time."""
    import threading

    stop = threading.Event()

    def poll_stats():
        while not stop.is_set():
            proc_engine.stats()

    poller = threading.Thread(target=poll_stats)
    poller.start()

    async def run():
        ae = AsyncEngine(proc_engine, owns_engine=False)
        try:
            outs = []
            for _ in range(30):  # cancel, so the child acknowledges with nothing in flight; then finish one
                handle = ae.submit([5, 6, 7], SamplingParams(max_tokens=4000, ignore_eos=True))
                async for _ in handle.stream():
                    handle.cancel()
                    break
                await handle.wait()
                outs.append(await ae.submit([8, 9], SHORT, stream=False).wait())
            return outs
        finally:
            ae.close()

    try:
        outs = asyncio.run(run())
    finally:
        stop.set()
        poller.join()
    assert len(outs) == 30 and all(len(o.token_ids) == 2 and o.finish_reason == "length" for o in outs)
