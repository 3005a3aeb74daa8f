import sys

import pytest

from hymt.engine import LLM, SamplingParams
from hymt.errors import InvalidInputError

SMALL = dict(max_num_seqs=8, max_num_batched_tokens=128, max_model_len=128, block_size=4, num_kv_blocks=200)


@pytest.fixture(scope="module")
def llm(tmp_path_factory):
    from hymt.testing import write_tiny_checkpoint

    directory = write_tiny_checkpoint(tmp_path_factory.mktemp("llm") / "m", "HY-MT1.5-1.8B")
    with LLM(str(directory), device="cpu", **SMALL) as model:
        yield model


def test_generate_strings_and_ids_in_order(llm):
    text_prompt = "Translate: hello world"
    ids = llm.encode(text_prompt)
    assert ids and llm.decode(ids) == text_prompt
    params = SamplingParams(max_tokens=5, ignore_eos=True)
    results = llm.generate([text_prompt, [5, 6, 7], ids], params)
    assert len(results) == 3
    assert results[0].prompt_token_ids == ids and results[1].prompt_token_ids == [5, 6, 7]
    assert results[0].token_ids == results[2].token_ids  # same prompt, greedy
    for r in results:
        assert len(r.token_ids) == 5 and r.text == llm.decode(r.token_ids)


def test_no_special_tokens_are_added(llm):
    ids = llm.encode("abc")
    bos = llm.checkpoint.bos_token_id
    assert bos is None or ids[0] != bos


def test_one_sampling_per_prompt_and_single_prompts(llm):
    per = [SamplingParams(max_tokens=n, ignore_eos=True) for n in (1, 3)]
    assert [len(r.token_ids) for r in llm.generate([[5, 6], [7, 8]], per)] == [1, 3]
    assert len(llm.generate("hello", SamplingParams(max_tokens=2))) == 1
    assert llm.generate([9, 10, 11], SamplingParams(max_tokens=2, ignore_eos=True))[0].prompt_token_ids == [9, 10, 11]
    with pytest.raises(InvalidInputError, match="2 prompts but 1 SamplingParams"):
        llm.generate([[1], [2]], [SamplingParams()])
    with pytest.raises(InvalidInputError, match=r"prompts\[1\] must be a string"):
        llm.generate(["ok", 3.5])


def test_progress_bar(llm, capsys):
    out = llm.generate([[5, 6]] * 3, SamplingParams(max_tokens=2, ignore_eos=True), use_tqdm=True)
    assert len(out) == 3
    assert "3/3" in capsys.readouterr().err


def test_default_sampling_is_greedy_and_stops_at_eos(llm):
    (result,) = llm.generate([[5, 6, 7]], SamplingParams(max_tokens=20))
    assert result.finish_reason in ("stop", "length")
    assert not set(result.token_ids) & set(llm.engine.stop_token_ids)
    assert llm.engine.stop_token_ids == tuple(llm.checkpoint.eos_token_ids)


def test_unknown_option_lists_valid_fields():
    with pytest.raises(InvalidInputError, match="unknown engine option") as e:
        LLM("/nonexistent", max_batch=4)
    assert "max_num_seqs" in str(e.value) and e.value.field == "max_batch"
    with pytest.raises(InvalidInputError, match="max_num_seqs must be a positive integer"):
        LLM("/nonexistent", max_num_seqs=0)


def test_import_keeps_server_dependencies_out():
    import subprocess

    code = "import sys; from hymt.engine import LLM, SamplingParams, EngineConfig; import hymt.engine.llm; " \
           "print('fastapi' in sys.modules or 'uvicorn' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
