"""AsyncEngine: one loop thread over any Engine. Stand-in engines whose steps the tests gate
(engine_stand_ins.CountingEngine) decide what happens between steps, not the clock."""
import asyncio
import threading

import pytest
from engine_stand_ins import FAULT, CountingEngine

from hymt.engine.async_engine import AsyncEngine
from hymt.engine.config import EngineConfig
from hymt.engine.interface import EngineStats
from hymt.engine.native_engine import NativeEngine
from hymt.engine.sampling import SamplingParams
from hymt.errors import EngineError, InvalidInputError


@pytest.fixture
def fake():
    eng = CountingEngine()
    ae = AsyncEngine(eng)
    yield eng, ae
    ae.close()


def test_submit_from_many_threads(fake):
    eng, ae = fake
    results = {}

    def worker(i):
        results[i] = ae.submit([100 * i], SamplingParams(max_tokens=3 + i % 3)).result(timeout=10)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, out in results.items():
        n = 3 + i % 3
        assert out.token_ids == [100 * i + k for k in range(n)] and out.finish_reason == "length"
    assert len(eng.thread_ids) == 1  # only the loop thread touched the engine
    assert threading.get_ident() not in eng.thread_ids


def test_await_and_stream(fake):
    _, ae = fake

    async def main():
        h1 = ae.submit([10], SamplingParams(max_tokens=4))
        h2 = ae.submit([50], SamplingParams(max_tokens=5))
        deltas = [d async for d in h2.stream()]
        out1 = await h1.wait()
        return out1, deltas

    out1, deltas = asyncio.run(main())
    assert out1.token_ids == [10, 11, 12, 13]
    assert [t for d in deltas for t in d.new_token_ids] == [50, 51, 52, 53, 54]
    assert [d.finished for d in deltas] == [False] * 4 + [True]
    assert deltas[-1].token_ids == [50, 51, 52, 53, 54] and deltas[-1].finish_reason == "length"
    assert deltas[2].token_ids == [50, 51, 52]


def test_stream_started_late_still_sees_every_token(fake):
    _, ae = fake
    h = ae.submit([7], SamplingParams(max_tokens=3))
    h.result(timeout=10)

    async def collect():
        return [d async for d in h.stream()]

    deltas = asyncio.run(collect())
    assert [t for d in deltas for t in d.new_token_ids] == [7, 8, 9] and deltas[-1].finished


def test_a_request_that_is_only_awaited_asks_the_engine_for_its_final_output(fake):
    eng, ae = fake
    waited = ae.submit([1], SamplingParams(max_tokens=2), stream=False)
    streamed = ae.submit([2], SamplingParams(max_tokens=2))
    waited.result(timeout=10), streamed.result(timeout=10)
    assert eng.final_only == {waited.request_id}


def test_cancel_aborts_in_the_engine():
    eng = CountingEngine(gated=True)
    with AsyncEngine(eng) as ae:
        h = ae.submit([1], SamplingParams(max_tokens=10_000))
        eng.allow_steps(2)
        eng.wait_steps(2)
        eng.wait_blocked()  # in step 3: its commands were applied before the cancel
        h.cancel()
        eng.allow_steps(1)  # step 3 ends; the loop applies the cancel before a step 4
        out = h.result(timeout=10)
        assert out.finished and out.finish_reason == "abort" and out.token_ids == [1, 2, 3]
        assert eng.aborted == [h.request_id] and not eng.reqs
    assert eng.closed


def test_bad_request_fails_alone(fake):
    _, ae = fake
    bad = ae.submit([], SamplingParams(max_tokens=2))
    good = ae.submit([3], SamplingParams(max_tokens=2))
    with pytest.raises(InvalidInputError, match="must not be empty"):
        bad.result(timeout=10)
    assert good.result(timeout=10).token_ids == [3, 4]


def test_step_fault_fails_in_flight_requests_and_the_loop_survives(fake):
    eng, ae = fake
    doomed = ae.submit([FAULT], SamplingParams(max_tokens=3))
    with pytest.raises(EngineError, match="kernel fault"):
        doomed.result(timeout=10)
    assert doomed.request_id in eng.aborted
    assert isinstance(ae.loop_error, RuntimeError)
    after = ae.submit([5], SamplingParams(max_tokens=2))
    assert after.result(timeout=10).token_ids == [5, 6]


def test_close_fails_pending_and_rejects_new():
    eng = CountingEngine(gated=True)
    ae = AsyncEngine(eng)
    h = ae.submit([1], SamplingParams(max_tokens=10_000))
    eng.wait_blocked()  # the loop thread is inside a step
    closer = threading.Thread(target=ae.close)
    closer.start()
    eng.allow_steps(1)  # that step ends; the loop sees the close
    closer.join(10)
    with pytest.raises(EngineError, match="closed"):
        h.result(timeout=10)
    with pytest.raises(EngineError, match="closed"):
        ae.submit([1], SamplingParams())
    assert not ae._thread.is_alive() and eng.closed
    ae.close()  # idempotent


def test_stats_and_timeout(fake):
    _, ae = fake
    assert isinstance(ae.stats(), EngineStats)
    assert ae.stop_token_ids == (0,)
    gated = CountingEngine(gated=True)
    with AsyncEngine(gated) as ae2:
        h = ae2.submit([1], SamplingParams(max_tokens=50))
        gated.wait_blocked()  # no step may finish: the request cannot
        with pytest.raises(TimeoutError):
            h.result(timeout=0.05)
        h.cancel()
        gated.allow_steps(1)
        assert h.result(timeout=10).finish_reason == "abort"


def test_native_engine_stream_equals_generate(tiny_config):
    cfg = EngineConfig(max_num_seqs=4, max_num_batched_tokens=32, max_model_len=64, block_size=4, num_kv_blocks=40)
    engine = NativeEngine(dict(tiny_config), cfg, device="cpu", random_weights=True)
    params = SamplingParams(max_tokens=6, ignore_eos=True)
    prompts = [[5, 6, 7, 8], [9, 10], [11] * 9]
    expected = [o.token_ids for o in engine.generate(prompts, params)]
    with AsyncEngine(engine) as ae:
        async def main():
            handles = [ae.submit(p, params) for p in prompts]
            streams = [[d async for d in h.stream()] for h in handles]
            long = ae.submit([3] * 5, SamplingParams(max_tokens=40, ignore_eos=True))
            async for _ in long.stream():  # running: it holds KV blocks
                long.cancel()
                break
            return streams, await long.wait()

        streams, cancelled = asyncio.run(main())
        assert [[t for d in s for t in d.new_token_ids] for s in streams] == expected
        assert [s[-1].token_ids for s in streams] == expected
        # The loop aborted it in the engine (freeing its blocks) before reporting the abort.
        assert cancelled.finish_reason == "abort" and engine.stats().kv_blocks_used == 0
