"""ModelRunner through the pair of calls the engine makes: prepare(batch), then run(prepared)."""
import pytest
import torch

from hymt.engine.batch import ScheduledSeq, StepBatch
from hymt.engine.config import EngineConfig
from hymt.engine.loader import load_model
from hymt.engine.model_runner import ModelRunner
from hymt.engine.native_engine import start_model_runner
from hymt.errors import EngineError

BS = 4
CPU = torch.device("cpu")


@pytest.fixture(scope="module")
def runner(tiny_config):
    cfg = EngineConfig(max_num_seqs=4, max_num_batched_tokens=32, max_model_len=32, block_size=BS, num_kv_blocks=12)
    return start_model_runner(dict(tiny_config), cfg, device=CPU, dtype=torch.float32, random_weights=True).runner


def execute(runner: ModelRunner, batch: StepBatch, **deferred) -> torch.Tensor:
    return runner.run(runner.prepare(batch, **deferred))


def test_logits_rows_and_kv_consistency(runner):
    prompt = [5, 9, 13, 2, 7, 30, 44]
    # one sequence in two steps (prefill 6, then a decode of the 7th token) ...
    execute(runner, StepBatch([ScheduledSeq(0, prompt[:6], 0, [1, 2], False)]))
    step2 = execute(runner, StepBatch([ScheduledSeq(0, prompt[6:], 6, [1, 2], True)]))
    # ... gives the logits of the same sequence prefilled at once into other blocks.
    whole = execute(runner, StepBatch([ScheduledSeq(1, prompt, 0, [3, 4], True),
                                       ScheduledSeq(2, prompt[:3], 0, [5], True)]))
    assert step2.shape == (1, runner.vocab_size) and whole.shape == (2, runner.vocab_size)
    assert step2.dtype == torch.float32
    torch.testing.assert_close(step2[0], whole[0], rtol=1e-5, atol=1e-5)
    none = execute(runner, StepBatch([ScheduledSeq(3, prompt[:3], 0, [6], False)]))
    assert none.shape == (0, runner.vocab_size)


def test_deferred_inputs_come_from_the_previous_step_on_the_device(runner):
    """An overlapped step's input the host has not read yet (a placeholder 0 here) is taken
    from the previous step's sampled ids: the same logits as with the token itself."""
    prompt = [8, 3, 21, 4]
    execute(runner, StepBatch([ScheduledSeq(0, prompt, 0, [7], False)]))
    known = execute(runner, StepBatch([ScheduledSeq(0, [17], 4, [7, 8], True)]))
    sampled = torch.tensor([99, 17])  # row 1 of the previous step's samples holds the token
    patched = execute(runner, StepBatch([ScheduledSeq(0, [0], 4, [7, 8], True)]),
                      deferred_dst=[0], deferred_src=[1], prev_tokens=sampled)
    torch.testing.assert_close(patched, known)


def test_a_runner_steps_only_once_its_cache_is_allocated(tiny_config):
    cfg = EngineConfig(max_num_seqs=2, max_num_batched_tokens=8, max_model_len=16, block_size=BS, num_kv_blocks=6)
    bare = ModelRunner(load_model(dict(tiny_config), CPU, torch.float32, random_weights=True), cfg)
    with pytest.raises(EngineError, match="allocate"):
        bare.prepare(StepBatch([ScheduledSeq(0, [1, 2], 0, [1], True)]))
