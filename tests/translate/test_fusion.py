"""Chimera fusion through the SDK: N sampled candidates, then one fusion request per text."""
from __future__ import annotations

import pytest

from hymt.errors import InvalidInputError
from hymt.translate import Translator


@pytest.fixture
def chimera(tmp_path):
    from hymt.checkpoint import load_checkpoint
    from hymt.testing import ScriptedEngine, write_tiny_checkpoint

    directory = write_tiny_checkpoint(tmp_path / "Hunyuan-MT-Chimera-7B", "Hunyuan-MT-Chimera-7B")
    checkpoint = load_checkpoint(directory)

    def answer(user, params):
        if "translations of the" in user:  # the fusion prompt
            return "Fused answer."
        return f"Candidate {params.seed}."

    engine = ScriptedEngine(checkpoint, answer)
    translator = Translator(str(directory), engine=engine, cache=False)
    yield translator, engine
    translator.close()


def test_fusion_runs_n_candidates_then_one_fusion_request(chimera):
    translator, engine = chimera
    results = translator.translate_batch(["Good morning.", "Thank you very much."], to="de", source="en", fusion=3)
    assert [r.text for r in results] == ["Fused answer.", "Fused answer."]
    candidates = [(user, p) for user, p in engine.prompts if "translations of the" not in user]
    fusions = [user for user, _ in engine.prompts if "translations of the" in user]
    assert len(candidates) == 2 * 3 and len(fusions) == 2
    assert sorted({p.seed for _, p in candidates}) == [0, 1, 2] and all(p.temperature == 0.7 for _, p in candidates)
    assert all(f"```Candidate {k}.```" in fusions[0] for k in range(3))
    assert results[0].prompt_tokens > sum(len(ids) for ids in engine.prompt_ids[-1:])  # candidates counted


def test_fusion_needs_the_template_and_whole_texts(chimera, make_translator):
    translator, _ = chimera
    with pytest.raises(InvalidInputError) as err:
        translator.stream("Hi there.", to="de", source="en", fusion=2)
    assert err.value.field == "fusion"
    with pytest.raises(InvalidInputError) as err:
        translator.translate("Hi there.", to="de", source="en", fusion=9)
    assert err.value.field == "fusion"
    plain, _ = make_translator()
    with pytest.raises(InvalidInputError) as err:
        plain.translate("Hi there.", to="de", source="en", fusion=2)
    assert err.value.field == "fusion" and "Chimera" in str(err.value)
